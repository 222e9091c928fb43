//! `#[op2::kernel]`: keeps the function, checks its signature and body, and
//! emits the metadata type `par_loop!` checks arguments against.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{FnArg, Ident, ItemFn, ReturnType, Type, TypeReference};

use crate::lane_twin::lane_twin;
use crate::lowering::{lower_fate, lower_random_streams, lower_spatial};

use crate::signature::parse_param;
use crate::subset::check_body;
use crate::translate::{translate, Uses};

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut func: ItemFn = match syn::parse2(item) {
        Ok(f) => f,
        Err(e) => return e.to_compile_error(),
    };
    let mut errors = Vec::new();
    let portable_math = match attr.to_string().as_str() {
        "" => false,
        "portable_math" => true,
        _ => {
            errors.push(syn::Error::new_spanned(
                &attr,
                "#[op2::kernel] takes no arguments but `portable_math` (op2's own sin, exp, ln, pow, ... on every backend)",
            ));
            false
        }
    };
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
                p.near = near.iter().find(|(n, _)| *n == p.name).map(|&(_, k)| k);
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

    let (c_source, uses) = match translate(&lowered, &params, portable_math) {
        Ok(c) => c,
        Err(errs) => {
            let errs = errs.iter().map(syn::Error::to_compile_error);
            return quote!(#func #(#errs)*);
        }
    };
    if portable_math {
        crate::portable::use_portable_math(&mut func.block);
    }
    let vis = &func.vis;
    let ident = &func.sig.ident;
    let name = ident.to_string();
    let infos = params.iter().map(|p| p.info_tokens());
    let uses = uses_tokens(&uses);
    let param_types = func.sig.inputs.iter().filter_map(|a| match a {
        syn::FnArg::Typed(t) => Some(&t.ty),
        syn::FnArg::Receiver(_) => None,
    });
    let native = native_twin(&func);
    let lane = lane_twin(&func, &params);
    // Each parameter's element type by loop position (`par_loop!`'s
    // generic loop bodies name them).
    let elems = params.iter().enumerate().map(|(k, p)| {
        let scalar = &p.scalar;
        quote!(impl ::op2::__private::ParamElem<#k> for #ident { type T = #scalar; })
    });
    quote! {
        #func

        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #ident {}

        #native

        #lane

        #(#elems)*

        // SAFETY: the metadata is generated from the signature just above.
        unsafe impl ::op2::Kernel for #ident {
            const INFO: ::op2::KernelInfo = ::op2::KernelInfo {
                name: #name,
                params: &[#(#infos),*],
                c_source: #c_source,
                uses: #uses,
            };
            type Fn = fn(#(#param_types),*);
        }
    }
}

/// The `::op2::KernelUses` literal of what the translation uses.
fn uses_tokens(uses: &Uses) -> TokenStream {
    let Uses {
        random_streams,
        spatial_queries,
        named_dims,
        named_arities,
        slices,
        portable_math,
    } = uses;
    quote! {
        ::op2::KernelUses {
            random_streams: #random_streams,
            spatial_queries: #spatial_queries,
            named_dims: &[#(#named_dims),*],
            named_arities: &[#(#named_arities),*],
            slices: &[#(#slices),*],
            portable_math: #portable_math,
        }
    }
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
