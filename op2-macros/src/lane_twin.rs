//! The kernel's lane copy, `<kernel>::__op2_lane`: the same body with each
//! parameter taken as one lane of component-major staging
//! (`op2::__private::LaneRef` / `LaneMut`), which `par_loop!`'s lane path
//! calls for the lanes of a group in a loop the compiler vectorises (see
//! op2-core's `lane.rs`). `__OP2_LANES` says whether the body reads its
//! parameters only as `p[c]` and `*p`, the forms a lane view takes; if
//! not, the kernel has placeholders in place of a copy, and `par_loop!`
//! keeps its other paths.

use proc_macro2::{TokenStream, TokenTree};
use quote::quote;
use syn::visit::Visit;
use syn::{Expr, Ident, ItemFn};

use crate::signature::{Param, Shape};

/// The lane copy, its flag and the parameters' `LaneParam` impls; for a
/// kernel with a parameter of another shape (a whole map's table, a ragged
/// row, random streams, spatial lists, fates), or whose body uses a
/// parameter in another form, placeholders (`no_lanes`).
pub fn lane_twin(func: &ItemFn, params: &[Param]) -> TokenStream {
    let plain = |p: &Param| !p.random && p.near.is_none() && !p.fate;
    if !params
        .iter()
        .all(|p| plain(p) && matches!(p.shape, Shape::Scalar | Shape::Array(_)))
    {
        return no_lanes(func, params);
    }
    let ident = &func.sig.ident;
    let vis = &func.vis;
    let arrays: Vec<&Ident> = params
        .iter()
        .filter(|p| matches!(p.shape, Shape::Array(_)))
        .map(|p| &p.name)
        .collect();
    let scalars: Vec<&Ident> = params
        .iter()
        .filter(|p| matches!(p.shape, Shape::Scalar))
        .map(|p| &p.name)
        .collect();
    if !reads_only_lane_forms(&func.block, &arrays, &scalars) {
        return no_lanes(func, params);
    }
    let lane_ty = |p: &Param, life: TokenStream| {
        let t = &p.scalar;
        let d = match &p.shape {
            Shape::Array(d) => const_arg(d),
            _ => quote!(1),
        };
        if p.mutable {
            quote!(::op2::__private::LaneMut<#life, #t, #d>)
        } else {
            quote!(::op2::__private::LaneRef<#life, #t, #d>)
        }
    };
    let inputs = params.iter().map(|p| {
        let (name, ty) = (&p.name, lane_ty(p, quote!('_)));
        quote!(mut #name: #ty)
    });
    let block = &func.block;
    let allows = func.attrs.iter().filter(|a| a.path().is_ident("allow"));
    let stagings = params.iter().enumerate().map(|(k, p)| {
        let t = &p.scalar;
        let soa = match &p.shape {
            Shape::Array(d) => {
                let d = const_arg(d);
                quote!(::op2::__private::LaneArray<#t, #d>)
            }
            _ => quote!(::op2::__private::LaneScalar<#t>),
        };
        let view = lane_ty(p, quote!('a));
        let lane = if p.mutable { quote!(lane_mut) } else { quote!(lane) };
        quote! {
            impl ::op2::__private::LaneParam<#k> for #ident {
                type Soa = #soa;
                type View<'a> = #view;
                #[inline(always)]
                fn view(soa: &mut #soa, l: usize) -> Self::View<'_> {
                    soa.#lane(l)
                }
            }
        }
    });
    quote! {
        impl #ident {
            #[doc(hidden)]
            #[inline(always)]
            #[allow(unused_mut, clippy::needless_range_loop, clippy::manual_memcpy, clippy::too_many_arguments)]
            #(#allows)*
            #vis fn __op2_lane(#(#inputs),*) #block

            /// `__op2_lane` runs the body on lane views.
            #[doc(hidden)]
            #vis const __OP2_LANES: bool = true;
        }

        #(#stagings)*
    }
}

/// What a kernel without a lane copy answers a loop body's lane path with:
/// `__OP2_LANES` false, so the path never runs, and items that let it
/// type-check whatever the loop's arguments (a loop that gives a kernel of
/// other shapes direct or `m[i]` arguments is refused by `par_loop!`'s
/// argument check, which then speaks alone).
fn no_lanes(func: &ItemFn, params: &[Param]) -> TokenStream {
    let ident = &func.sig.ident;
    let vis = &func.vis;
    let units = params.iter().map(|_| quote!(_: ()));
    let stagings = params.iter().enumerate().map(|(k, p)| {
        let t = &p.scalar;
        quote! {
            impl ::op2::__private::LaneParam<#k> for #ident {
                type Soa = ::op2::__private::LaneScalar<#t>;
                type View<'a> = ();
                #[inline(always)]
                fn view(_: &mut Self::Soa, _: usize) {}
            }
        }
    });
    quote! {
        impl #ident {
            /// Never called: this kernel has no lane copy.
            #[doc(hidden)]
            #[allow(dead_code, clippy::too_many_arguments)]
            #vis fn __op2_lane(#(#units),*) {
                unreachable!("`__OP2_LANES` is false: the lane path does not run")
            }

            /// This kernel has no lane copy.
            #[doc(hidden)]
            #vis const __OP2_LANES: bool = false;
        }

        #(#stagings)*
    }
}

/// An array length as a const generic argument: a literal or a single
/// name as it is, anything else (`N + 1`, `consts::N`) in braces.
fn const_arg(d: &Expr) -> TokenStream {
    match d {
        Expr::Lit(_) => quote!(#d),
        Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => quote!(#d),
        _ => quote!({ #d }),
    }
}

/// Whether every mention of a parameter in `block` is `a[..]` for an
/// array parameter or `*s` for a scalar one: the forms a lane view answers
/// as the reference would. A mention anywhere else (`*a` for a whole array,
/// passed on, a method called, shadowed, inside a macro) is counted among
/// the tokens but not among the lane forms.
fn reads_only_lane_forms(block: &syn::Block, arrays: &[&Ident], scalars: &[&Ident]) -> bool {
    struct Forms<'a> {
        arrays: &'a [&'a Ident],
        scalars: &'a [&'a Ident],
        count: usize,
    }
    fn is_one_of(e: &Expr, names: &[&Ident]) -> bool {
        matches!(e, Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some_and(|i| names.contains(&i)))
    }
    impl<'ast> Visit<'ast> for Forms<'_> {
        fn visit_expr(&mut self, e: &'ast Expr) {
            match e {
                Expr::Index(ix) if is_one_of(&ix.expr, self.arrays) && !matches!(*ix.index, Expr::Range(_)) => {
                    self.count += 1;
                    self.visit_expr(&ix.index);
                }
                Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) && is_one_of(&u.expr, self.scalars) => {
                    self.count += 1;
                }
                _ => syn::visit::visit_expr(self, e),
            }
        }
    }
    fn mentions(tokens: TokenStream, names: &[&Ident]) -> usize {
        tokens
            .into_iter()
            .map(|t| match t {
                TokenTree::Ident(i) => usize::from(names.contains(&&i)),
                TokenTree::Group(g) => mentions(g.stream(), names),
                _ => 0,
            })
            .sum()
    }
    let mut forms = Forms {
        arrays,
        scalars,
        count: 0,
    };
    forms.visit_block(block);
    let names: Vec<&Ident> = arrays.iter().chain(scalars).copied().collect();
    forms.count == mentions(quote!(#block), &names)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With arrays `a` and `c` and scalar `b`.
    fn ready(body: &str) -> bool {
        let block: syn::Block = syn::parse_str(body).unwrap();
        let (a, b, c) = (
            quote::format_ident!("a"),
            quote::format_ident!("b"),
            quote::format_ident!("c"),
        );
        reads_only_lane_forms(&block, &[&a, &c], &[&b])
    }

    #[test]
    fn indexing_arrays_and_dereferencing_scalars_are_lane_forms() {
        assert!(ready("{ let x = a[0] * *b; c[a[1] as usize] += x; *b = 1.0; }"));
        assert!(ready("{ for i in 0..2 { let ab = a[i]; c[i] = ab.sqrt(); } }"));
    }

    #[test]
    fn any_other_mention_is_not() {
        assert!(!ready("{ helper(a); }"));
        assert!(!ready("{ let s = a.len(); }"));
        assert!(!ready("{ let a = 2.0; c[0] = a; }"));
        assert!(!ready("{ assert!(a[0] > 0.0); }"));
        assert!(!ready("{ let d = &a; }"));
        assert!(!ready("{ for x in a.iter() { c[0] += *x; } }"));
        assert!(!ready("{ let whole = *a; c[0] = whole[1]; }"));
        assert!(!ready("{ *c = [0.0; 2]; }"));
        assert!(!ready("{ let x = b[0]; }"));
        assert!(!ready("{ let x = a[1..3][0]; }"));
    }
}
