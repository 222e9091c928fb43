//! Kernel parameter types: what `#[op2::kernel]` accepts and records.

use op2_kernel_abi::KernelScalar;
use op2_kernel_abi::ScalarType;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::{Expr, FnArg, Ident, Pat, Type};

/// What a kernel parameter may be.
fn param_hint() -> String {
    let types: Vec<&str> = ScalarType::ALL.iter().map(|t| t.rust_name()).collect();
    format!(
        "kernel parameters must be `&T`, `&[T; D]`, `&[[T; D]; A]`, or `&[T]` / `&[[T; D]]` \
         for a ragged map (`&mut` for data the loop writes), with T one of {}; \
         `&mut Philox` for the element's random stream, or `&Spatial2d` / `&Spatial3d` / \
         `&Discrete2d` for a spatial message list",
        types.join(", ")
    )
}

/// The shape of one kernel parameter.
pub enum Shape {
    /// `&T`.
    Scalar,
    /// `&[T; D]`.
    Array(Expr),
    /// `&[[T; D]; A]`.
    Table(Expr, Expr),
    /// `&[T]` (`None`) or `&[[T; D]]` (`Some(D)`): the targets of a ragged map.
    Ragged(Option<Expr>),
}

/// One parsed kernel parameter.
pub struct Param {
    pub name: Ident,
    pub scalar: Ident,
    pub shape: Shape,
    pub mutable: bool,
    /// One of the two hidden parameters of a `&mut Philox` parameter.
    pub random: bool,
    /// One of the two hidden parameters of a `&Spatial2d`/`&Spatial3d`/
    /// `&Discrete2d` parameter: which (`None` otherwise).
    pub near: Option<op2_kernel_abi::NearKind>,
    /// The hidden parameter of a `&mut Fate` parameter.
    pub fate: bool,
}

impl Param {
    /// The `::op2::ParamInfo` constructor call describing this parameter.
    pub fn info_tokens(&self) -> TokenStream {
        let name = self.name.to_string();
        let t = &self.scalar;
        let m = self.mutable;
        match (&self.shape, self.random) {
            (Shape::Scalar, true) => return quote!(::op2::ParamInfo::random_id(#name)),
            (_, true) => return quote!(::op2::ParamInfo::random_key(#name)),
            _ => {}
        }
        if self.fate {
            return quote!(::op2::ParamInfo::fate(#name));
        }
        if let Some(kind) = self.near {
            let kind = format_ident!("{}", kind.type_name());
            let kind = quote!(::op2::NearKind::#kind);
            return match &self.shape {
                Shape::Ragged(_) => quote!(::op2::ParamInfo::near_bins(#name, #kind)),
                _ => quote!(::op2::ParamInfo::near_grid(#name, #kind)),
            };
        }
        // The element type through `Scalar`, so that only data types pass.
        let t = quote!(<#t as ::op2::Scalar>::TYPE);
        match &self.shape {
            Shape::Scalar => quote!(::op2::ParamInfo::scalar(#name, #t, #m)),
            Shape::Array(d) => quote!(::op2::ParamInfo::array(#name, #t, #d, #m)),
            Shape::Table(d, a) => quote!(::op2::ParamInfo::table(#name, #t, #d, #a, #m)),
            Shape::Ragged(None) => quote!(::op2::ParamInfo::ragged(#name, #t, 1, #m, false)),
            Shape::Ragged(Some(d)) => quote!(::op2::ParamInfo::ragged(#name, #t, #d, #m, true)),
        }
    }
}

fn scalar_ident(ty: &Type) -> Option<Ident> {
    match ty {
        Type::Path(p) if p.qself.is_none() => {
            let id = p.path.get_ident()?;
            // Parameters hold data: their element type is a data type.
            KernelScalar::from_rust_name(&id.to_string())
                .and_then(KernelScalar::data_type)
                .map(|_| id.clone())
        }
        Type::Paren(p) => scalar_ident(&p.elem),
        _ => None,
    }
}

/// Parses one function parameter.
pub fn parse_param(arg: &FnArg) -> syn::Result<Param> {
    let FnArg::Typed(pt) = arg else {
        return Err(syn::Error::new_spanned(
            arg,
            "kernels are free functions: remove `self`",
        ));
    };
    let name = match &*pt.pat {
        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => p.ident.clone(),
        other => {
            return Err(syn::Error::new_spanned(
                other,
                "kernel parameters must be plain names (`x: &[f64; 2]`), not patterns",
            ))
        }
    };
    let Type::Reference(r) = &*pt.ty else {
        return Err(syn::Error::new(pt.ty.span(), param_hint()));
    };
    let mutable = r.mutability.is_some();
    let bad = || syn::Error::new(r.elem.span(), param_hint());
    let (scalar, shape) = match &*r.elem {
        Type::Array(outer) => match (&*outer.elem, scalar_ident(&outer.elem)) {
            (_, Some(t)) => (t, Shape::Array(outer.len.clone())),
            (Type::Array(inner), None) => {
                let t = scalar_ident(&inner.elem).ok_or_else(bad)?;
                (t, Shape::Table(inner.len.clone(), outer.len.clone()))
            }
            _ => return Err(bad()),
        },
        Type::Slice(slice) => match (&*slice.elem, scalar_ident(&slice.elem)) {
            (_, Some(t)) => (t, Shape::Ragged(None)),
            (Type::Array(inner), None) => {
                let t = scalar_ident(&inner.elem).ok_or_else(bad)?;
                (t, Shape::Ragged(Some(inner.len.clone())))
            }
            _ => return Err(bad()),
        },
        other => (scalar_ident(other).ok_or_else(bad)?, Shape::Scalar),
    };
    Ok(Param {
        name,
        scalar,
        shape,
        mutable,
        random: false,
        near: None,
        fate: false,
    })
}
