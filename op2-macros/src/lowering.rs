//! The kernel parameters op2 makes for the kernel (`&mut Philox`,
//! `&Spatial2d`/`&Spatial3d`, `&mut Fate`) lowered to the hidden parameters
//! `par_loop!` passes and a prologue that makes them: what the checks, the
//! metadata and the translation see. The function the user wrote keeps them.

use op2_kernel_abi::NearKind;
use quote::format_ident;
use syn::{FnArg, Ident, ItemFn, Pat, PatType, Type, TypeReference};

/// What one parameter becomes: hidden parameters and the statement that
/// makes the parameter from them.
struct Lowered {
    inputs: Vec<FnArg>,
    prologue: syn::Stmt,
}

/// The parameter and its reference type if it is written `name: &Path` or
/// `name: &mut Path`, with the path's segments.
fn reference_to_path(arg: &FnArg) -> Option<(&PatType, &TypeReference, Vec<String>)> {
    let FnArg::Typed(pt) = arg else { return None };
    let Type::Reference(r) = &*pt.ty else { return None };
    let Type::Path(path) = &*r.elem else { return None };
    if path.path.segments.last()?.arguments != syn::PathArguments::None {
        return None;
    }
    let segs = path.path.segments.iter().map(|s| s.ident.to_string()).collect();
    Some((pt, r, segs))
}

/// The parameter's name, or an error if it is a pattern (`example` shows
/// the expected form).
fn plain_name(pt: &PatType, example: &str) -> syn::Result<Ident> {
    match &*pt.pat {
        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => Ok(p.ident.clone()),
        other => Err(syn::Error::new_spanned(
            other,
            format!("kernel parameters must be plain names (`{example}`), not patterns"),
        )),
    }
}

/// The kernel with every parameter `classify` recognises replaced by what
/// `lower` makes of it (the prologues first in the body, in parameter
/// order). A parameter `classify` reports an error for stays as it is.
fn lower_with<T>(
    func: &ItemFn,
    errors: &mut Vec<syn::Error>,
    classify: impl Fn(&FnArg, &mut Vec<syn::Error>) -> Option<syn::Result<T>>,
    mut lower: impl FnMut(T) -> Lowered,
) -> ItemFn {
    let mut lowered = func.clone();
    let mut inputs = syn::punctuated::Punctuated::<FnArg, syn::Token![,]>::new();
    let mut prologue: Vec<syn::Stmt> = Vec::new();
    for arg in &func.sig.inputs {
        match classify(arg, errors) {
            None => inputs.push(arg.clone()),
            Some(Err(e)) => {
                errors.push(e);
                inputs.push(arg.clone());
            }
            Some(Ok(found)) => {
                let Lowered {
                    inputs: hidden,
                    prologue: stmt,
                } = lower(found);
                inputs.extend(hidden);
                prologue.push(stmt);
            }
        }
    }
    lowered.sig.inputs = inputs;
    prologue.append(&mut lowered.block.stmts);
    lowered.block.stmts = prologue;
    lowered
}

/// The name of a parameter written `name: &mut Philox` (`None` for any
/// other parameter). `&Philox` is reported in `errors` and taken as `&mut`,
/// so that it draws no second error.
fn philox_param(arg: &FnArg, errors: &mut Vec<syn::Error>) -> Option<syn::Result<Ident>> {
    let (pt, r, segs) = reference_to_path(arg)?;
    if segs.last()? != "Philox" {
        return None;
    }
    if r.mutability.is_none() {
        errors.push(syn::Error::new_spanned(
            &pt.ty,
            "a random stream parameter is `&mut Philox` (drawing advances it)",
        ));
    }
    Some(plain_name(pt, "rng: &mut Philox"))
}

/// The kernel with each `rng: &mut Philox` parameter replaced by the two
/// hidden parameters `par_loop!` passes for `streams(DRAW)`, `op2_id_rng:
/// &i64` (the element's global id) and `op2_key_rng: &[i64; 2]` (seed, loop
/// counter), and a first statement making the stream from them; and the
/// hidden parameters' names. Every backend's translation starts from this.
pub fn lower_random_streams(func: &ItemFn, errors: &mut Vec<syn::Error>) -> (ItemFn, Vec<Ident>) {
    let mut hidden = Vec::new();
    let lowered = lower_with(func, errors, philox_param, |name| {
        let (id, key) = (format_ident!("op2_id_{}", name), format_ident!("op2_key_{}", name));
        let lowered = Lowered {
            inputs: vec![syn::parse_quote!(#id: &i64), syn::parse_quote!(#key: &[i64; 2])],
            prologue: syn::parse_quote!(
                let mut #name = Philox::new(#key[0] as u64, *#id as u64, #key[1] as u32);
            ),
        };
        hidden.extend([id, key]);
        lowered
    });
    (lowered, hidden)
}

/// The kind and name of a parameter written `name: &Spatial2d`, `name:
/// &Spatial3d` or `name: &Discrete2d` (`None` for any other parameter).
fn spatial_param(arg: &FnArg, errors: &mut Vec<syn::Error>) -> Option<syn::Result<(Ident, NearKind)>> {
    let (pt, r, segs) = reference_to_path(arg)?;
    let kind = crate::subset::spatial_type_kind(&segs)?;
    if r.mutability.is_some() {
        errors.push(syn::Error::new_spanned(
            &pt.ty,
            "a spatial message parameter is read only: `&Spatial2d` / `&Spatial3d` / `&Discrete2d`",
        ));
    }
    Some(plain_name(pt, "msgs: &Spatial3d").map(|name| (name, kind)))
}

/// The kernel with each `msgs: &Spatial3d` (or `&Spatial2d`, `&Discrete2d`) parameter
/// replaced by the two hidden parameters `par_loop!` passes for
/// `list(NEAR)`, `op2_bins_msgs: &[i32]` (the first message of every bin,
/// read whole) and `op2_grid_msgs: &[f64; 8]` (the grid), and a first
/// statement making the parameter from them; and the hidden parameters'
/// names with the kind. The translation starts from this.
pub fn lower_spatial(func: &ItemFn, errors: &mut Vec<syn::Error>) -> (ItemFn, Vec<(Ident, NearKind)>) {
    let mut hidden = Vec::new();
    let lowered = lower_with(func, errors, spatial_param, |(name, kind)| {
        let (bins, grid) = (format_ident!("op2_bins_{}", name), format_ident!("op2_grid_{}", name));
        let ty = format_ident!("{}", kind.type_name());
        let params = op2_kernel_abi::GRID_PARAMS;
        let lowered = Lowered {
            inputs: vec![
                syn::parse_quote!(#bins: &[i32]),
                syn::parse_quote!(#grid: &[f64; #params]),
            ],
            prologue: syn::parse_quote!(let #name = #ty::new(#bins, #grid);),
        };
        hidden.extend([(bins, kind), (grid, kind)]);
        lowered
    });
    (lowered, hidden)
}

/// The name of a parameter written `name: &mut Fate` (`None` for any other
/// parameter). `&Fate` is reported in `errors` and taken as `&mut`.
fn fate_param(arg: &FnArg, errors: &mut Vec<syn::Error>) -> Option<syn::Result<Ident>> {
    let (pt, r, segs) = reference_to_path(arg)?;
    if !crate::subset::is_fate_type(&segs) {
        return None;
    }
    if r.mutability.is_none() {
        errors.push(syn::Error::new_spanned(
            &pt.ty,
            "a fate parameter is `&mut Fate` (the kernel decides it)",
        ));
    }
    Some(plain_name(pt, "fate: &mut Fate"))
}

/// The kernel with each `fate: &mut Fate` parameter replaced by the hidden
/// parameter `par_loop!` passes for `life(FATE)`, `op2_fate_fate: &mut i32`
/// (the agent's flags, a direct WRITE), and a first statement making the
/// fate from it (the translation clears the flags there); and the hidden
/// parameters' names.
pub fn lower_fate(func: &ItemFn, errors: &mut Vec<syn::Error>) -> (ItemFn, Vec<Ident>) {
    let mut hidden = Vec::new();
    let lowered = lower_with(func, errors, fate_param, |name| {
        let flags = format_ident!("op2_fate_{}", name);
        let lowered = Lowered {
            inputs: vec![syn::parse_quote!(#flags: &mut i32)],
            prologue: syn::parse_quote!(let mut #name = Fate::new(#flags);),
        };
        hidden.push(flags);
        lowered
    });
    (lowered, hidden)
}
