//! `#[op2::kernel]`: keeps the function, checks its signature and body, and
//! emits the metadata type `par_loop!` checks arguments against.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{ItemFn, ReturnType};

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
    let mut params = Vec::new();
    for arg in &sig.inputs {
        match parse_param(arg) {
            Ok(p) => params.push(p),
            Err(e) => errors.push(e),
        }
    }
    errors.extend(check_body(&func.block));

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

    let c_source = match translate(&func, &params) {
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
    quote! {
        #func

        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #ident {}

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
