//! Kernel parameter types: what `#[op2::kernel]` accepts and records.

use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;
use syn::{Expr, FnArg, Ident, Pat, Type};

/// Element types a kernel parameter may have.
pub const SCALARS: [&str; 5] = ["f64", "f32", "i32", "i64", "u32"];

const PARAM_HINT: &str = "kernel parameters must be `&T`, `&[T; D]` or `&[[T; D]; A]` \
     (`&mut` for data the loop writes), with T one of f64, f32, i32, i64, u32";

/// The shape of one kernel parameter.
pub enum Shape {
    /// `&T`.
    Scalar,
    /// `&[T; D]`.
    Array(Expr),
    /// `&[[T; D]; A]`.
    Table(Expr, Expr),
}

/// One parsed kernel parameter.
pub struct Param {
    pub name: Ident,
    pub scalar: Ident,
    pub shape: Shape,
    pub mutable: bool,
}

impl Param {
    /// The `::op2::ParamInfo` constructor call describing this parameter.
    pub fn info_tokens(&self) -> TokenStream {
        let name = self.name.to_string();
        let t = &self.scalar;
        let m = self.mutable;
        match &self.shape {
            Shape::Scalar => quote!(::op2::ParamInfo::scalar::<#t>(#name, #m)),
            Shape::Array(d) => quote!(::op2::ParamInfo::array::<#t, { #d }>(#name, #m)),
            Shape::Table(d, a) => quote!(::op2::ParamInfo::table::<#t, { #d }, { #a }>(#name, #m)),
        }
    }
}

fn scalar_ident(ty: &Type) -> Option<Ident> {
    match ty {
        Type::Path(p) if p.qself.is_none() => {
            let id = p.path.get_ident()?;
            SCALARS.contains(&id.to_string().as_str()).then(|| id.clone())
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
        return Err(syn::Error::new(pt.ty.span(), PARAM_HINT));
    };
    let mutable = r.mutability.is_some();
    let bad = || syn::Error::new(r.elem.span(), PARAM_HINT);
    let (scalar, shape) = match &*r.elem {
        Type::Array(outer) => match (&*outer.elem, scalar_ident(&outer.elem)) {
            (_, Some(t)) => (t, Shape::Array(outer.len.clone())),
            (Type::Array(inner), None) => {
                let t = scalar_ident(&inner.elem).ok_or_else(bad)?;
                (t, Shape::Table(inner.len.clone(), outer.len.clone()))
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
    })
}
