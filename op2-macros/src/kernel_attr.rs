//! `#[op2::kernel]`: keeps the function, checks its signature and body, and
//! emits the metadata type `par_loop!` checks arguments against.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{FnArg, Ident, ItemFn, Pat, ReturnType, Type, TypeReference};

use crate::signature::parse_param;
use crate::subset::check_body;
use crate::translate::translate;

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut func: ItemFn = match syn::parse2(item) {
        Ok(f) => f,
        Err(e) => return e.to_compile_error(),
    };
    let mut errors = Vec::new();
    if !attr.is_empty() {
        errors.push(syn::Error::new_spanned(&attr, "#[op2::kernel] takes no arguments"));
    }
    let sig = &func.sig;
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.push(syn::Error::new_spanned(
            &sig.generics,
            "kernels cannot be generic: write one kernel per element type",
        ));
    }
    if let Some(t) = &sig.asyncness {
        errors.push(syn::Error::new_spanned(t, "kernels cannot be `async`"));
    }
    if let Some(t) = &sig.unsafety {
        errors.push(syn::Error::new_spanned(t, "kernels cannot be `unsafe`"));
    }
    if let Some(v) = &sig.variadic {
        errors.push(syn::Error::new_spanned(v, "kernels cannot be variadic"));
    }
    if let ReturnType::Type(_, ty) = &sig.output {
        errors.push(syn::Error::new_spanned(
            ty,
            "kernels return nothing: write results through `&mut` parameters",
        ));
    }
    // What the checks, the metadata and the translation see: the function
    // with each `&mut Philox` parameter made its two hidden ones.
    let (lowered, random) = lower_random_streams(&func, &mut errors);
    let (lowered, near) = lower_spatial(&lowered, &mut errors);
    let (lowered, fates) = lower_fate(&lowered, &mut errors);
    let mut params = Vec::new();
    for arg in &lowered.sig.inputs {
        match parse_param(arg) {
            Ok(mut p) => {
                p.random = random.contains(&p.name);
                p.near = near.iter().find(|(n, _)| *n == p.name).map_or(0, |&(_, d)| d);
                p.fate = fates.contains(&p.name);
                params.push(p)
            }
            Err(e) => errors.push(e),
        }
    }
    errors.extend(check_body(&lowered.block));

    if !func.attrs.iter().any(|a| a.path().is_ident("inline")) {
        // The native backends call the kernel once per element: inline it into the loop.
        func.attrs.push(syn::parse_quote!(#[inline(always)]));
    }
    // Kernels are written in the C-like subset the translators accept (index
    // loops, element-by-element copies); these lints would push away from it.
    func.attrs
        .push(syn::parse_quote!(#[allow(clippy::needless_range_loop, clippy::manual_memcpy, clippy::len_zero)]));
    if !errors.is_empty() {
        let errs = errors.iter().map(syn::Error::to_compile_error);
        return quote!(#func #(#errs)*);
    }

    let c_source = match translate(&lowered, &params) {
        Ok(c) => c,
        Err(errs) => {
            let errs = errs.iter().map(syn::Error::to_compile_error);
            return quote!(#func #(#errs)*);
        }
    };
    let vis = &func.vis;
    let ident = &func.sig.ident;
    let name = ident.to_string();
    let infos = params.iter().map(|p| p.info_tokens());
    let param_types = func.sig.inputs.iter().filter_map(|a| match a {
        syn::FnArg::Typed(t) => Some(&t.ty),
        syn::FnArg::Receiver(_) => None,
    });
    let native = native_twin(&func);
    quote! {
        #func

        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #ident {}

        #native

        // SAFETY: the metadata is generated from the signature just above.
        unsafe impl ::op2::Kernel for #ident {
            const INFO: ::op2::KernelInfo = ::op2::KernelInfo {
                name: #name,
                params: &[#(#infos),*],
                c_source: #c_source,
            };
            type Fn = fn(#(#param_types),*);
        }
    }
}

/// The name of a parameter written `name: &mut Philox` (`None` for any
/// other parameter). `&Philox` is reported in `errors` and taken as `&mut`,
/// so that it draws no second error.
fn philox_param(arg: &FnArg, errors: &mut Vec<syn::Error>) -> Option<syn::Result<Ident>> {
    let FnArg::Typed(pt) = arg else { return None };
    let Type::Reference(r) = &*pt.ty else { return None };
    let Type::Path(path) = &*r.elem else { return None };
    let last = path.path.segments.last()?;
    if last.ident != "Philox" || !last.arguments.is_empty() {
        return None;
    }
    if r.mutability.is_none() {
        errors.push(syn::Error::new_spanned(
            &pt.ty,
            "a random stream parameter is `&mut Philox` (drawing advances it)",
        ));
    }
    match &*pt.pat {
        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => Some(Ok(p.ident.clone())),
        other => Some(Err(syn::Error::new_spanned(
            other,
            "kernel parameters must be plain names (`rng: &mut Philox`), not patterns",
        ))),
    }
}

/// The kernel with each `rng: &mut Philox` parameter replaced by the two
/// hidden parameters `par_loop!` passes for `streams(DRAW)`, `op2_id_rng:
/// &i64` (the element's global id) and `op2_key_rng: &[i64; 2]` (seed, loop
/// counter), and a first statement making the stream from them; and the
/// hidden parameters' names. Every backend's translation starts from this.
fn lower_random_streams(func: &ItemFn, errors: &mut Vec<syn::Error>) -> (ItemFn, Vec<Ident>) {
    let mut lowered = func.clone();
    let mut hidden = Vec::new();
    let mut inputs = syn::punctuated::Punctuated::<FnArg, syn::Token![,]>::new();
    let mut prologue: Vec<syn::Stmt> = Vec::new();
    for arg in &func.sig.inputs {
        match philox_param(arg, errors) {
            None => inputs.push(arg.clone()),
            Some(Err(e)) => {
                errors.push(e);
                inputs.push(arg.clone());
            }
            Some(Ok(name)) => {
                let (id, key) = (format_ident!("op2_id_{}", name), format_ident!("op2_key_{}", name));
                inputs.push(syn::parse_quote!(#id: &i64));
                inputs.push(syn::parse_quote!(#key: &[i64; 2]));
                prologue.push(syn::parse_quote!(
                    let mut #name = Philox::new(#key[0] as u64, *#id as u64, #key[1] as u32);
                ));
                hidden.extend([id, key]);
            }
        }
    }
    lowered.sig.inputs = inputs;
    prologue.append(&mut lowered.block.stmts);
    lowered.block.stmts = prologue;
    (lowered, hidden)
}

/// The dimension and name of a parameter written `name: &Spatial2d` or
/// `name: &Spatial3d` (`None` for any other parameter).
fn spatial_param(arg: &FnArg, errors: &mut Vec<syn::Error>) -> Option<syn::Result<(Ident, usize)>> {
    let FnArg::Typed(pt) = arg else { return None };
    let Type::Reference(r) = &*pt.ty else { return None };
    let Type::Path(path) = &*r.elem else { return None };
    let segs: Vec<String> = path.path.segments.iter().map(|s| s.ident.to_string()).collect();
    let dims = crate::subset::spatial_type_dims(&segs)?;
    if r.mutability.is_some() {
        errors.push(syn::Error::new_spanned(
            &pt.ty,
            "a spatial message parameter is read only: `&Spatial2d` / `&Spatial3d`",
        ));
    }
    match &*pt.pat {
        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => Some(Ok((p.ident.clone(), dims))),
        other => Some(Err(syn::Error::new_spanned(
            other,
            "kernel parameters must be plain names (`msgs: &Spatial3d`), not patterns",
        ))),
    }
}

/// The kernel with each `msgs: &Spatial3d` (or `&Spatial2d`) parameter
/// replaced by the two hidden parameters `par_loop!` passes for
/// `list(NEAR)`, `op2_bins_msgs: &[i32]` (the first message of every bin,
/// read whole) and `op2_grid_msgs: &[f64; 8]` (the grid), and a first
/// statement making the parameter from them; and the hidden parameters'
/// names with the dimension. The translation starts from this.
fn lower_spatial(func: &ItemFn, errors: &mut Vec<syn::Error>) -> (ItemFn, Vec<(Ident, usize)>) {
    let mut lowered = func.clone();
    let mut hidden = Vec::new();
    let mut inputs = syn::punctuated::Punctuated::<FnArg, syn::Token![,]>::new();
    let mut prologue: Vec<syn::Stmt> = Vec::new();
    for arg in &func.sig.inputs {
        match spatial_param(arg, errors) {
            None => inputs.push(arg.clone()),
            Some(Err(e)) => {
                errors.push(e);
                inputs.push(arg.clone());
            }
            Some(Ok((name, dims))) => {
                let (bins, grid) = (format_ident!("op2_bins_{}", name), format_ident!("op2_grid_{}", name));
                let ty = format_ident!("Spatial{}d", dims);
                inputs.push(syn::parse_quote!(#bins: &[i32]));
                let params = op2_core::GRID_PARAMS;
                inputs.push(syn::parse_quote!(#grid: &[f64; #params]));
                prologue.push(syn::parse_quote!(let #name = #ty::new(#bins, #grid);));
                hidden.extend([(bins, dims), (grid, dims)]);
            }
        }
    }
    lowered.sig.inputs = inputs;
    prologue.append(&mut lowered.block.stmts);
    lowered.block.stmts = prologue;
    (lowered, hidden)
}

/// The name of a parameter written `name: &mut Fate` (`None` for any other
/// parameter). `&Fate` is reported in `errors` and taken as `&mut`.
fn fate_param(arg: &FnArg, errors: &mut Vec<syn::Error>) -> Option<syn::Result<Ident>> {
    let FnArg::Typed(pt) = arg else { return None };
    let Type::Reference(r) = &*pt.ty else { return None };
    let Type::Path(path) = &*r.elem else { return None };
    let segs: Vec<String> = path.path.segments.iter().map(|s| s.ident.to_string()).collect();
    if !crate::subset::is_fate_type(&segs) {
        return None;
    }
    if r.mutability.is_none() {
        errors.push(syn::Error::new_spanned(
            &pt.ty,
            "a fate parameter is `&mut Fate` (the kernel decides it)",
        ));
    }
    match &*pt.pat {
        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => Some(Ok(p.ident.clone())),
        other => Some(Err(syn::Error::new_spanned(
            other,
            "kernel parameters must be plain names (`fate: &mut Fate`), not patterns",
        ))),
    }
}

/// The kernel with each `fate: &mut Fate` parameter replaced by the hidden
/// parameter `par_loop!` passes for `life(FATE)`, `op2_fate_fate: &mut i32`
/// (the agent's flags, a direct WRITE), and a first statement making the
/// fate from it (the translation clears the flags there); and the hidden
/// parameters' names.
fn lower_fate(func: &ItemFn, errors: &mut Vec<syn::Error>) -> (ItemFn, Vec<Ident>) {
    let mut lowered = func.clone();
    let mut hidden = Vec::new();
    let mut inputs = syn::punctuated::Punctuated::<FnArg, syn::Token![,]>::new();
    let mut prologue: Vec<syn::Stmt> = Vec::new();
    for arg in &func.sig.inputs {
        match fate_param(arg, errors) {
            None => inputs.push(arg.clone()),
            Some(Err(e)) => {
                errors.push(e);
                inputs.push(arg.clone());
            }
            Some(Ok(name)) => {
                let flags = format_ident!("op2_fate_{}", name);
                inputs.push(syn::parse_quote!(#flags: &mut i32));
                prologue.push(syn::parse_quote!(let mut #name = Fate::new(#flags);));
                hidden.push(flags);
            }
        }
    }
    lowered.sig.inputs = inputs;
    prologue.append(&mut lowered.block.stmts);
    lowered.block.stmts = prologue;
    (lowered, hidden)
}

/// The kernel as the native backends call it, `<kernel>::__op2_native`: the
/// same body, with each READ ragged parameter (`&[T]`, `&[[T; D]]`) taken as
/// an `op2::Row`, which reads the targets in place through the map instead of
/// from a gathered copy. The function the user wrote keeps its slices.
fn native_twin(func: &ItemFn) -> TokenStream {
    let ident = &func.sig.ident;
    let vis = &func.vis;
    let block = &func.block;
    let inputs = func.sig.inputs.iter().map(|arg| match arg {
        FnArg::Typed(pt) => match &*pt.ty {
            Type::Reference(TypeReference {
                mutability: None, elem, ..
            }) => match &**elem {
                Type::Slice(slice) => {
                    let (pat, elem) = (&pt.pat, &slice.elem);
                    quote!(#pat: ::op2::__private::Row<'_, #elem>)
                }
                _ => quote!(#arg),
            },
            _ => quote!(#arg),
        },
        FnArg::Receiver(_) => quote!(#arg),
    });
    // The lints the user allowed on the kernel hold for its twin.
    let allows = func.attrs.iter().filter(|a| a.path().is_ident("allow"));
    // Spanned as the kernel's name, so that errors point at the kernel.
    let native = Ident::new("__op2_native", ident.span());
    quote! {
        impl #ident {
            #[doc(hidden)]
            #[inline(always)]
            #(#allows)*
            #vis fn #native(#(#inputs),*) #block
        }
    }
}
