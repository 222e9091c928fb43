//! `par_loop!`: parses the loop's arguments and expands to argument
//! descriptions, compile-time checks against the kernel's recorded signature,
//! and the gather / kernel call / scatter body the native backends run.
//! Each argument form lowers in `lower.rs`; the group path is `lanes.rs`.

mod lanes;
mod lower;

use op2_kernel_abi::{Access, ArgForm};
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned, ToTokens};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, Path, Token};

use lanes::Lanes;
use lower::{lower, positions, Pieces};

/// One argument as written: its data, mode, form (`op2_kernel_abi::ArgForm`,
/// the type every layer shares), and the map and entry it goes through.
pub(super) struct LoopArg {
    data: TokenStream,
    access: Access,
    form: ArgForm,
    map: Option<Expr>,
    /// The entry of `d(ACCESS, m[i])`.
    index: Option<Expr>,
    span: Span,
}

struct ParLoopInput {
    rt: Expr,
    kernel: Path,
    set: Expr,
    args: Vec<LoopArg>,
}

const ARG_HINT: &str =
    "expected a loop argument: `d(ACCESS)`, `d(ACCESS, map[i])`, `d(ACCESS, map)`, for a ragged map or a message list `d(ACCESS, r[..])`, random streams `s(DRAW)`, a spatial message list `list(NEAR)`, or births and deaths `life(FATE)`";

fn is_draw(e: &Expr) -> bool {
    matches!(e, Expr::Path(p) if p.path.is_ident("DRAW"))
}

fn is_fate(e: &Expr) -> bool {
    matches!(e, Expr::Path(p) if p.path.is_ident("FATE"))
}

fn is_near(e: &Expr) -> bool {
    matches!(e, Expr::Path(p) if p.path.is_ident("NEAR"))
}

fn parse_arg(e: Expr) -> syn::Result<LoopArg> {
    let span = e.span();
    let (data, inner): (TokenStream, Vec<Expr>) = match e {
        Expr::Call(c) => (c.func.to_token_stream(), c.args.into_iter().collect()),
        Expr::MethodCall(m) if m.turbofish.is_none() => {
            let (recv, method) = (m.receiver, m.method);
            (quote!(#recv.#method), m.args.into_iter().collect())
        }
        other => return Err(syn::Error::new_spanned(other, ARG_HINT)),
    };
    let (access, map, form, index) = match inner.as_slice() {
        [a] if is_draw(a) => (Access::Read, None, ArgForm::Draw, None),
        [a] if is_near(a) => (Access::Read, None, ArgForm::Near, None),
        [a] if is_fate(a) => (Access::Write, None, ArgForm::Fate, None),
        [a, _] if is_fate(a) => {
            return Err(syn::Error::new_spanned(
                a,
                "births and deaths are decided per element of the loop: write `life(FATE)`, without a map",
            ))
        }
        [a, _] if is_near(a) => {
            return Err(syn::Error::new_spanned(
                a,
                "a spatial message list is passed on its own: write `list(NEAR)`",
            ))
        }
        [a, _] if is_draw(a) => {
            return Err(syn::Error::new_spanned(
                a,
                "random streams are drawn per element of the loop: write `s(DRAW)`, without a map",
            ))
        }
        [a] => (parse_access(a)?, None, ArgForm::Direct, None),
        [a, Expr::Index(ix)] => match &*ix.index {
            Expr::Range(r) if r.start.is_none() && r.end.is_none() => {
                (parse_access(a)?, Some((*ix.expr).clone()), ArgForm::Ragged, None)
            }
            Expr::Range(r) => {
                return Err(syn::Error::new_spanned(
                    r,
                    "a ragged map argument takes all of an element's targets: write `r[..]`",
                ))
            }
            index => (
                parse_access(a)?,
                Some((*ix.expr).clone()),
                ArgForm::MapEntry,
                Some(index.clone()),
            ),
        },
        [a, m] => (parse_access(a)?, Some(m.clone()), ArgForm::MapAll, None),
        _ => return Err(syn::Error::new(span, ARG_HINT)),
    };
    Ok(LoopArg {
        data,
        access,
        form,
        map,
        index,
        span,
    })
}

/// An access mode as `par_loop!` spells it (`READ`, ...).
fn parse_access(e: &Expr) -> syn::Result<Access> {
    let name = match e {
        Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
        _ => None,
    };
    name.as_deref()
        .and_then(Access::from_keyword)
        .ok_or_else(|| syn::Error::new_spanned(e, "expected an access mode: READ, WRITE, RW, INC, MIN or MAX"))
}

impl Parse for ParLoopInput {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let items = Punctuated::<Expr, Token![,]>::parse_terminated(input)?;
        let mut it = items.into_iter();
        let usage = "usage: par_loop!(runtime, kernel, set, args...)";
        let rt = it.next().ok_or_else(|| input.error(usage))?;
        let kernel = match it.next() {
            Some(Expr::Path(p)) if p.qself.is_none() => p.path,
            Some(other) => return Err(syn::Error::new_spanned(other, "expected the kernel's name (a path)")),
            None => return Err(input.error(usage)),
        };
        let set = it.next().ok_or_else(|| input.error(usage))?;
        let mut args = Vec::new();
        let mut errors: Option<syn::Error> = None;
        for e in it {
            match parse_arg(e) {
                Ok(a) => args.push(a),
                Err(err) => match &mut errors {
                    Some(all) => all.combine(err),
                    None => errors = Some(err),
                },
            }
        }
        match errors {
            Some(e) => Err(e),
            None => Ok(ParLoopInput { rt, kernel, set, args }),
        }
    }
}

pub fn expand(input: TokenStream) -> TokenStream {
    match syn::parse2::<ParLoopInput>(input) {
        Ok(p) => generate(&p),
        Err(e) => e.to_compile_error(),
    }
}

fn generate(p: &ParLoopInput) -> TokenStream {
    let kernel = &p.kernel;
    // The kernel as the native backends call it (see `#[op2::kernel]`).
    let native = syn::Ident::new("__op2_native", kernel.span());
    let info = quote!(<#kernel as ::op2::Kernel>::INFO);
    let rt = &p.rt;
    let set = &p.set;
    // The group path (see `lanes.rs`): staging arrays, their fills, the
    // kernel's arguments and the scatters, lane `__op2_l` of each.
    let mut lanes = Lanes::default();
    // Every argument's pieces, at its loop position (`s(DRAW)` and
    // `list(NEAR)` take two).
    let mut pieces = Pieces::default();
    let mut count = 0;
    for a in &p.args {
        pieces.extend(lower(a, count, &info, &mut lanes));
        count += positions(a.form);
    }
    let Pieces {
        checks,
        bindings,
        life_bindings,
        specs,
        views,
        view_names,
        binds,
        gathers,
        call_args,
        scatters,
        map_views,
        draws,
        lives,
    } = pieces;
    let iview = quote!(::op2::__private::IndirectView);

    let space = quote_spanned!(set.span()=> ::op2::__private::IterationSpace::space(__op2_space));
    // One element's gather, kernel call and scatter, at element `__op2_e`;
    // `interior` says whether it lies in a run `run_end` returned.
    let element = |interior: bool| {
        quote! {
            // SAFETY: Runtime::par_loop validated the loop against the kernel's
            // signature and borrowed its data before running this body, and
            // gives concurrent chunks disjoint write targets.
            #[allow(unused_unsafe)]
            unsafe {
                #[allow(dead_code)]
                const __OP2_INTERIOR: bool = #interior;
                #(#gathers)*
                #kernel::#native(#(#call_args),*);
                #(#scatters)*
            }
        }
    };
    let anywhere = element(false);
    let whole_set = lanes.whole_set_loop(kernel, &native, &anywhere);
    // Loops through maps get the run structure too (their views never start
    // a run, so it folds away); loops without maps do not need it.
    let runs = if map_views.is_empty() {
        quote!()
    } else {
        let interior = element(true);
        quote! {
        // Through a Stencil: runs of interior elements, where the
        // neighbours lie at fixed offsets (a loop that vectorises),
        // and border elements one at a time. Constant false for maps.
        ::core::option::Option::None if false #(|| #iview::has_runs(#map_views))* => {
            let (mut __op2_at, __op2_end) = (__op2_range.start, __op2_range.end);
            while __op2_at < __op2_end {
                let __op2_run = __op2_end;
                #(let __op2_run = #iview::run_end(#map_views, __op2_at, __op2_run);)*
                if __op2_run > __op2_at {
                    for __op2_e in __op2_at..__op2_run {
                        #interior
                    }
                    __op2_at = __op2_run;
                } else {
                    let __op2_e = __op2_at;
                    #anywhere
                    __op2_at += 1;
                }
            }
        }
        }
    };
    // A label for `s(DRAW)`'s early error (only then: an unused label warns).
    let early_exit = p.args.iter().any(|a| matches!(a.form, ArgForm::Draw | ArgForm::Near));
    let label = if !early_exit { quote!() } else { quote!('__op2_loop:) };
    // After a loop given `life(FATE)`: the fates applied (kept for another
    // `apply` if that fails), or, if the loop failed, forgotten.
    let fates_applied = if lives.is_empty() {
        quote!()
    } else {
        quote! {
            let __op2_result = match __op2_result {
                // Each applied (each may number births across processes, so
                // none is skipped); the first error is the loop's.
                ::core::result::Result::Ok(()) => {
                    let mut __op2_applied: ::op2::Result<()> = ::core::result::Result::Ok(());
                    #(
                        let __op2_one = ::op2::Lifecycle::apply_after_loop(#lives, #info.name, __op2_rt);
                        if let (::core::result::Result::Ok(()), ::core::result::Result::Err(e)) = (&__op2_applied, __op2_one) {
                            __op2_applied = ::core::result::Result::Err(e);
                        }
                    )*
                    __op2_applied
                }
                ::core::result::Result::Err(e) => {
                    #(::op2::Lifecycle::discard(#lives);)*
                    ::core::result::Result::Err(e)
                }
            };
        }
    };
    quote! {{
        const _: () = ::op2::__private::check_count(&#info, #count);
        #(#checks)*
        // The function called below must be the one the metadata describes.
        let _: <#kernel as ::op2::Kernel>::Fn = #kernel;
        let __op2_rt: &::op2::Runtime = &(#rt);
        #(#life_bindings)*
        let __op2_result = #label {
        // A Set or a Subset (or a reference to one), kept alive for the loop.
        let __op2_space = &(#set);
        let (__op2_set, __op2_subset): (&::op2::Set, ::core::option::Option<&::op2::Subset>) = #space;
        #(#bindings)*
        let __op2_args: [::op2::__private::ArgSpec<'_>; #count] = [#(#specs),*];
        // The views (raw pointers into the data) are taken by the body's
        // first call, once for the loop: the runtime calls it only after
        // validating the loop and taking its borrows, so no `Dat::swap`,
        // lifecycle reallocation or other exclusive borrow can move a buffer
        // between the pointer's reading and its use.
        let __op2_views = ::std::sync::OnceLock::new();
        let __op2_body = |__op2_range: ::core::ops::Range<usize>,
                          __op2_p: &mut ::op2::__private::Partials<'_>| {
            let (#(#view_names,)*) = *__op2_views.get_or_init(|| {
                #(#views)*
                (#(#view_names,)*)
            });
            #(#binds)*
            // The range holds positions: elements of the set, or indices into
            // a subset's elements (on the host only when a host body runs: a
            // subset selected on a device keeps them there for device loops;
            // the runtime read them back, or failed, before any host body).
            // Branching once here keeps the loop over a whole set free of any
            // per-element lookup.
            match __op2_subset.map(::op2::Subset::indices) {
                #runs
                ::core::option::Option::None => {
                    #whole_set
                }
                ::core::option::Option::Some(__op2_elems) => {
                    for &__op2_i in &__op2_elems[__op2_range] {
                        let __op2_e = __op2_i as usize;
                        #anywhere
                    }
                }
            }
        };
        let __op2_result = __op2_rt.par_loop(&#info, __op2_set, __op2_subset, &__op2_args, &__op2_body);
        if __op2_result.is_ok() {
            // The next loop drawing from these streams gets the next counter.
            #(::op2::RandomStreams::loop_ran(#draws);)*
        }
        __op2_result
        };
        #fates_applied
        __op2_result
    }}
}
