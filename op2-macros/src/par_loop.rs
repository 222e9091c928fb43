//! `par_loop!`: parses the loop's arguments and expands to argument
//! descriptions, compile-time checks against the kernel's recorded signature,
//! and the gather / kernel call / scatter body the native backends run.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, Path, Token};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    Read,
    Write,
    Rw,
    Inc,
    Min,
    Max,
}

impl Access {
    fn parse(e: &Expr) -> syn::Result<Access> {
        let name = match e {
            Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
            _ => None,
        };
        Ok(match name.as_deref() {
            Some("READ") => Access::Read,
            Some("WRITE") => Access::Write,
            Some("RW") => Access::Rw,
            Some("INC") => Access::Inc,
            Some("MIN") => Access::Min,
            Some("MAX") => Access::Max,
            _ => {
                return Err(syn::Error::new_spanned(
                    e,
                    "expected an access mode: READ, WRITE, RW, INC, MIN or MAX",
                ))
            }
        })
    }

    fn tokens(self) -> TokenStream {
        match self {
            Access::Read => quote!(::op2::Access::Read),
            Access::Write => quote!(::op2::Access::Write),
            Access::Rw => quote!(::op2::Access::Rw),
            Access::Inc => quote!(::op2::Access::Inc),
            Access::Min => quote!(::op2::Access::Min),
            Access::Max => quote!(::op2::Access::Max),
        }
    }
}

enum Via {
    Direct,
    Entry(Expr),
    All,
    /// `r[..]`: all targets of a ragged map.
    Ragged,
    /// `s(DRAW)`: random streams for a `&mut Philox` parameter.
    Draw,
    /// `list(NEAR)`: a spatial message list for a `&Spatial2d` / `&Spatial3d` parameter.
    Near,
    /// `life(FATE)`: births and deaths for a `&mut Fate` parameter.
    Fate,
}

struct LoopArg {
    data: TokenStream,
    access: Access,
    map: Option<Expr>,
    via: Via,
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
    let (access, map, via) = match inner.as_slice() {
        [a] if is_draw(a) => (Access::Read, None, Via::Draw),
        [a] if is_near(a) => (Access::Read, None, Via::Near),
        [a] if is_fate(a) => (Access::Write, None, Via::Fate),
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
        [a] => (Access::parse(a)?, None, Via::Direct),
        [a, Expr::Index(ix)] => match &*ix.index {
            Expr::Range(r) if r.start.is_none() && r.end.is_none() => {
                (Access::parse(a)?, Some((*ix.expr).clone()), Via::Ragged)
            }
            Expr::Range(r) => {
                return Err(syn::Error::new_spanned(
                    r,
                    "a ragged map argument takes all of an element's targets: write `r[..]`",
                ))
            }
            index => (Access::parse(a)?, Some((*ix.expr).clone()), Via::Entry(index.clone())),
        },
        [a, m] => (Access::parse(a)?, Some(m.clone()), Via::All),
        _ => return Err(syn::Error::new(span, ARG_HINT)),
    };
    Ok(LoopArg {
        data,
        access,
        map,
        via,
        span,
    })
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
    // Loop positions: an argument each, but two for `s(DRAW)` (ids, key).
    let count: usize = p
        .args
        .iter()
        .map(|a| if matches!(a.via, Via::Draw | Via::Near) { 2 } else { 1 })
        .sum();

    let mut checks = Vec::new();
    let mut bindings = Vec::new();
    // Bound before anything can end the loop early, so that its fates are
    // applied or forgotten whatever happens (a numbering of births across
    // processes waits for every process).
    let mut life_bindings = Vec::new();
    let mut specs = Vec::new();
    let mut views = Vec::new();
    let mut binds = Vec::new();
    let mut gathers = Vec::new();
    let mut call_args = Vec::new();
    let mut scatters = Vec::new();
    // The views of arguments through a Map or a Stencil (runs of interior elements).
    let mut map_views = Vec::new();
    // The group path (see `LANES`): staging arrays, their fills, the
    // kernel's arguments and the scatters, lane `__op2_l` of each.
    let mut lanes = Lanes::default();
    let iarg = quote!(::op2::__private::IndirectArg);
    let iview = quote!(::op2::__private::IndirectView);

    // The streams of `s(DRAW)` arguments: told when the loop has run.
    // Every argument's view, by name (`__op2_v<k>`).
    let mut view_names = Vec::new();
    let mut draws = Vec::new();
    // The lifecycles of `life(FATE)` arguments: applied when the loop has run.
    let mut lives = Vec::new();
    let mut k = 0;
    for a in &p.args {
        let k = {
            let here = k;
            k += if matches!(a.via, Via::Draw | Via::Near) { 2 } else { 1 };
            here
        };
        let d = format_ident!("__op2_d{}", k);
        let v = format_ident!("__op2_v{}", k);
        view_names.push(v.clone());
        let s = format_ident!("__op2_s{}", k);
        let m = format_ident!("__op2_m{}", k);
        let access = a.access.tokens();
        let data = &a.data;
        if let Via::Draw = a.via {
            draw_arg(
                a,
                k,
                &info,
                DrawIdents::new(k),
                &mut DrawParts {
                    checks: &mut checks,
                    bindings: &mut bindings,
                    specs: &mut specs,
                    views: &mut views,
                    gathers: &mut gathers,
                    call_args: &mut call_args,
                },
            );
            draws.push(d);
            lanes.ok = false;
            continue;
        }
        if let Via::Near = a.via {
            near_arg(
                a,
                k,
                &info,
                &mut DrawParts {
                    checks: &mut checks,
                    bindings: &mut bindings,
                    specs: &mut specs,
                    views: &mut views,
                    gathers: &mut binds,
                    call_args: &mut call_args,
                },
            );
            lanes.ok = false;
            continue;
        }
        if let Via::Fate = a.via {
            let life = format_ident!("__op2_l{}", k);
            let write = quote!(::op2::Access::Write);
            let private = quote!(::op2::__private);
            checks.push(quote_spanned!(a.span=> const _: () = #private::check_arg(&#info, #k, #private::ArgForm::Fate, #write);));
            life_bindings.push(quote_spanned!(a.span=> let #life: &::op2::Lifecycle = &(#data);));
            specs.push(quote_spanned!(a.span=> #private::DirectArg::arg_spec(::op2::Lifecycle::fates(#life), #write)));
            views.push(quote_spanned!(a.span=> let #v = #private::DirectArg::direct_view(::op2::Lifecycle::fates(#life), #k, #write);));
            binds.push(quote!(let #v = #private::DirectView::bind(#v, __op2_p);));
            gathers.push(quote!(let mut #s = ::op2::Fate::new();));
            call_args.push(quote!(&mut #s));
            scatters.push(quote!(#private::DirectView::store(#v, __op2_e, &::op2::Fate::flags(&#s));));
            lives.push(life);
            lanes.ok = false;
            continue;
        }
        let form = match a.via {
            Via::Draw | Via::Near | Via::Fate => unreachable!("handled above"),
            Via::Direct => quote!(::op2::__private::ArgForm::Direct),
            Via::Entry(_) => quote!(::op2::__private::ArgForm::MapEntry),
            Via::All => quote!(::op2::__private::ArgForm::MapAll),
            Via::Ragged => quote!(::op2::__private::ArgForm::Ragged),
        };
        checks.push(quote_spanned!(a.span=> const _: () = ::op2::__private::check_arg(&#info, #k, #form, #access);));
        bindings.push(quote_spanned!(a.span=> let #d = &(#data);));
        match (&a.map, &a.via) {
            // A RaggedMap or a MessageList: the trait picks the view.
            (Some(map), Via::Ragged) => bindings.push(quote_spanned!(a.span=> let #m = &(#map);)),
            // A Map or a Stencil: the trait picks the view at compile time.
            (Some(map), _) => bindings.push(quote_spanned!(a.span=> let #m = &(#map);)),
            (None, _) => {}
        }
        // Literal indices stay literals in the body so the optimiser sees them.
        let index = match &a.via {
            Via::Entry(Expr::Lit(l)) => Some(l.to_token_stream()),
            Via::Entry(ix) => {
                let i = format_ident!("__op2_i{}", k);
                bindings.push(quote_spanned!(a.span=> let #i: usize = #ix;));
                Some(i.to_token_stream())
            }
            _ => None,
        };
        let mutable = a.access != Access::Read;
        call_args.push(match (&a.via, mutable) {
            // A ragged argument's staging is a buffer reused from element to
            // element; a READ one is read in place, as a Row.
            (Via::Ragged, true) => quote!(#s.as_mut_slice()),
            (Via::Ragged, false) => quote!(#v.row(__op2_e)),
            (_, true) => quote!(&mut #s),
            (_, false) => quote!(&#s),
        });
        let mut_kw = if mutable { quote!(mut) } else { quote!() };
        let e = quote!(__op2_e);
        lanes.arg(a, k, &index, mutable);
        match (&a.via, &index) {
            (Via::Direct, _) => {
                specs.push(quote_spanned!(a.span=> ::op2::__private::DirectArg::arg_spec(#d, #access)));
                views
                    .push(quote_spanned!(a.span=> let #v = ::op2::__private::DirectArg::direct_view(#d, #k, #access);));
                binds.push(quote!(let #v = ::op2::__private::DirectView::bind(#v, __op2_p);));
                let dv = quote!(::op2::__private::DirectView);
                gathers.push(match a.access {
                    Access::Write | Access::Inc => quote_spanned!(a.span=> let mut #s = #dv::zero(#v);),
                    _ => quote_spanned!(a.span=> let #mut_kw #s = #dv::load(#v, #e);),
                });
                if let Some(op) = scatter_op(a.access, "") {
                    scatters.push(quote_spanned!(a.span=> #dv::#op(#v, #e, &#s);));
                }
            }
            (Via::Entry(_), Some(i)) => {
                specs.push(quote_spanned!(a.span=> ::op2::__private::map_arg_spec(#d, #access, #iarg::map(#m), ::op2::__private::MapIndex::Entry(#i))));
                views.push(quote_spanned!(a.span=> let #v = #iarg::view(#m, #d);));
                binds.push(quote!(let #v = #v;));
                map_views.push(v.clone());
                gathers.push(match a.access {
                    Access::Write | Access::Inc => quote_spanned!(a.span=> let mut #s = #iview::zero(#v);),
                    _ => quote_spanned!(a.span=> let #mut_kw #s = #iview::load_at(#v, #e, #i, __OP2_INTERIOR);),
                });
                if let Some(op) = scatter_op(a.access, "_at") {
                    scatters.push(quote_spanned!(a.span=> #iview::#op(#v, #e, #i, &#s, __OP2_INTERIOR);));
                }
            }
            (Via::Ragged, _) => {
                let source = quote!(::op2::__private::SliceSource);
                specs.push(quote_spanned!(a.span=> #source::slice_arg_spec(#m, #d, #access)));
                views.push(quote_spanned!(a.span=> let #v = #source::slice_view(#m, #d);));
                if a.access != Access::Read {
                    // Room for the largest row: no growth inside the loop.
                    binds.push(quote_spanned!(a.span=> let mut #s = ::std::vec::Vec::with_capacity(#source::slice_capacity(#m));));
                    gathers.push(quote_spanned!(a.span=> #v.zero_into(#e, &mut #s);));
                    scatters.push(quote_spanned!(a.span=> #v.add_from(#e, &#s);));
                }
            }
            _ => {
                specs.push(quote_spanned!(a.span=> ::op2::__private::map_arg_spec(#d, #access, #iarg::map(#m), ::op2::__private::MapIndex::All)));
                views.push(quote_spanned!(a.span=> let #v = #iarg::view(#m, #d);));
                binds.push(quote!(let #v = #v;));
                map_views.push(v.clone());
                gathers.push(match a.access {
                    Access::Write | Access::Inc => quote_spanned!(a.span=> let mut #s = #iview::zero_all(#v);),
                    _ => quote_spanned!(a.span=> let #mut_kw #s = #iview::load_all(#v, #e, __OP2_INTERIOR);),
                });
                if let Some(op) = scatter_op(a.access, "_all") {
                    scatters.push(quote_spanned!(a.span=> #iview::#op(#v, #e, &#s, __OP2_INTERIOR);));
                }
            }
        }
    }

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
    let early_exit = !draws.is_empty() || p.args.iter().any(|a| matches!(a.via, Via::Near));
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
        let __op2_elems: ::core::option::Option<&[i32]> = __op2_subset.map(::op2::Subset::indices);
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
            // a subset's elements. Branching once here keeps the loop over a
            // whole set free of any per-element lookup.
            match __op2_elems {
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

/// The names one `s(DRAW)` argument at loop position `k` binds.
struct DrawIdents {
    streams: syn::Ident,
    args: syn::Ident,
    view: syn::Ident,
    stream: syn::Ident,
}

impl DrawIdents {
    fn new(k: usize) -> DrawIdents {
        DrawIdents {
            streams: format_ident!("__op2_d{}", k),
            args: format_ident!("__op2_r{}", k),
            view: format_ident!("__op2_v{}", k),
            stream: format_ident!("__op2_s{}", k),
        }
    }
}

/// Where the pieces of the expansion go.
struct DrawParts<'a> {
    checks: &'a mut Vec<TokenStream>,
    bindings: &'a mut Vec<TokenStream>,
    specs: &'a mut Vec<TokenStream>,
    views: &'a mut Vec<TokenStream>,
    gathers: &'a mut Vec<TokenStream>,
    call_args: &'a mut Vec<TokenStream>,
}

/// `s(DRAW)` at positions `k` (the set's global ids, a direct READ Dat) and
/// `k + 1` (`[seed, counter]`, a READ Global): what the `&mut Philox`
/// parameter's two hidden parameters receive in generated code. The native
/// body makes the element's stream from the id and passes it.
fn draw_arg(a: &LoopArg, k: usize, info: &TokenStream, names: DrawIdents, out: &mut DrawParts<'_>) {
    let DrawIdents {
        streams,
        args,
        view,
        stream,
    } = names;
    let data = &a.data;
    let read = quote!(::op2::Access::Read);
    let private = quote!(::op2::__private);
    out.checks
        .push(quote_spanned!(a.span=> const _: () = #private::check_arg(&#info, #k, #private::ArgForm::Draw, #read);));
    out.bindings
        .push(quote_spanned!(a.span=> let #streams: &::op2::RandomStreams = &(#data);));
    // The ids Dat and the key Global; an error ends the loop before it runs.
    out.bindings.push(quote_spanned!(a.span=>
        let #args = match ::op2::RandomStreams::loop_args(#streams, __op2_set) {
            ::core::result::Result::Ok(r) => r,
            ::core::result::Result::Err(e) => break '__op2_loop ::core::result::Result::Err(e),
        };
    ));
    out.specs
        .push(quote_spanned!(a.span=> #private::DirectArg::arg_spec(&#args.ids, #read)));
    out.specs
        .push(quote_spanned!(a.span=> #private::DirectArg::arg_spec(&#args.key, #read)));
    out.views.push(quote_spanned!(a.span=>
        let #view = (#private::DirectArg::direct_view(&#args.ids, #k, #read), #args.seed, #args.counter);
    ));
    out.gathers.push(quote_spanned!(a.span=>
        let mut #stream = {
            let id: i64 = #private::DirectView::load(#view.0, __op2_e);
            ::op2::Philox::new(#view.1, id as u64, #view.2)
        };
    ));
    out.call_args.push(quote!(&mut #stream));
}

/// `list(NEAR)` at positions `k` (the bins' offsets, a Dat read whole) and
/// `k + 1` (the grid, a READ Global): what the `&Spatial2d`/`&Spatial3d`
/// parameter's two hidden parameters receive in generated code. The native
/// body makes the parameter from the list's view, once per chunk.
fn near_arg(a: &LoopArg, k: usize, info: &TokenStream, out: &mut DrawParts<'_>) {
    let DrawIdents {
        streams: list,
        args,
        view,
        stream: param,
    } = DrawIdents::new(k);
    let data = &a.data;
    let read = quote!(::op2::Access::Read);
    let private = quote!(::op2::__private);
    out.checks
        .push(quote_spanned!(a.span=> const _: () = #private::check_arg(&#info, #k, #private::ArgForm::Near, #read);));
    out.bindings
        .push(quote_spanned!(a.span=> let #list: &::op2::MessageList = &(#data);));
    out.bindings.push(quote_spanned!(a.span=>
        let #args = match ::op2::MessageList::near_args(#list) {
            ::core::result::Result::Ok(r) => r,
            ::core::result::Result::Err(e) => break '__op2_loop ::core::result::Result::Err(e),
        };
    ));
    out.specs
        .push(quote_spanned!(a.span=> #private::near_bins_spec(&#args)));
    out.specs
        .push(quote_spanned!(a.span=> #private::DirectArg::arg_spec(#args.params, #read)));
    out.views.push(quote_spanned!(a.span=> let #view = #args.view();));
    // `gathers` here is the per-chunk bindings: one parameter per chunk.
    out.gathers
        .push(quote_spanned!(a.span=> let #param = #private::FromSpatialView::from_view(#view);));
    out.call_args.push(quote!(&#param));
}

/// Elements per group on the native group path: the kernel runs across the
/// lanes of staging arrays in a loop of fixed length, which the compiler
/// turns into vector instructions (two lanes per SSE2 register, four per
/// AVX2 one), as `jit` does with `#pragma omp simd` (see `lanes_c.rs` in
/// op2-backends).
const LANES: usize = 8;

/// The group path of a loop over a whole set: each argument gathered for
/// [`LANES`] elements, the kernel run lane by lane, then every lane's
/// scatter in element order. The result is the scalar path's, bit for bit,
/// where no element of a group reads what an earlier one writes: READ
/// through maps (nothing in the loop writes that Dat: one mode per Dat) and
/// direct arguments other than MIN and MAX (which may be a Global's running
/// reduction). Any other argument keeps the loop scalar (`ok` false).
///
/// Only loops that gather through a map take it (`gathers`), and of those
/// only the ones that write through none: measured on Airfoil, groups make
/// `adt_calc` (four nodes read, square roots) 1.4x faster, but `res_calc`
/// (increments through maps) and the direct loops (bandwidth-bound) slower,
/// as the staging arrays cost more than the vector arithmetic saves.
struct Lanes {
    ok: bool,
    gathers: bool,
    inits: Vec<TokenStream>,
    fills: Vec<TokenStream>,
    calls: Vec<TokenStream>,
    scatters: Vec<TokenStream>,
}

impl Default for Lanes {
    fn default() -> Lanes {
        Lanes {
            ok: true,
            gathers: false,
            inits: Vec::new(),
            fills: Vec::new(),
            calls: Vec::new(),
            scatters: Vec::new(),
        }
    }
}

impl Lanes {
    /// Adds argument `k` (a Dat or Global, directly or through a map).
    fn arg(&mut self, a: &LoopArg, k: usize, index: &Option<TokenStream>, mutable: bool) {
        let safe = match (&a.via, a.access) {
            (Via::Ragged, _) => false,
            (Via::Direct, access) => !matches!(access, Access::Min | Access::Max),
            (_, access) => access == Access::Read,
        };
        if !safe {
            self.ok = false;
            return;
        }
        self.gathers |= !matches!(a.via, Via::Direct);
        let v = format_ident!("__op2_v{}", k);
        let ls = format_ident!("__op2_ls{}", k);
        let dv = quote!(::op2::__private::DirectView);
        let iv = quote!(::op2::__private::IndirectView);
        let zeroed = matches!(a.access, Access::Write | Access::Inc);
        let (zero, load, op) = match (&a.via, index) {
            (Via::Direct, _) => (
                quote!(#dv::zero(#v)),
                quote!(#dv::load(#v, __op2_e)),
                scatter_op(a.access, "").map(|op| quote!(#dv::#op(#v, __op2_e, &#ls[__op2_l]);)),
            ),
            (Via::Entry(_), Some(i)) => (
                quote!(#iv::zero(#v)),
                quote!(#iv::load_at(#v, __op2_e, #i, false)),
                scatter_op(a.access, "_at").map(|op| quote!(#iv::#op(#v, __op2_e, #i, &#ls[__op2_l], false);)),
            ),
            _ => (
                quote!(#iv::zero_all(#v)),
                quote!(#iv::load_all(#v, __op2_e, false)),
                scatter_op(a.access, "_all").map(|op| quote!(#iv::#op(#v, __op2_e, &#ls[__op2_l], false);)),
            ),
        };
        self.inits.push(quote!(let mut #ls = [#zero; #LANES];));
        if !zeroed {
            self.fills.push(quote!(#ls[__op2_l] = #load;));
        }
        self.calls.push(if mutable {
            quote!(&mut #ls[__op2_l])
        } else {
            quote!(&#ls[__op2_l])
        });
        self.scatters.extend(op);
    }

    /// The loop over positions `__op2_range` of a whole set: groups where
    /// every argument allows them, then the rest one element at a time
    /// (`anywhere`, the scalar element).
    fn whole_set_loop(&self, kernel: &syn::Path, native: &syn::Ident, anywhere: &TokenStream) -> TokenStream {
        if !(self.ok && self.gathers) {
            return quote! {
                for __op2_e in __op2_range {
                    #anywhere
                }
            };
        }
        let Lanes {
            inits,
            fills,
            calls,
            scatters,
            ..
        } = self;
        quote! {
            let mut __op2_p0 = __op2_range.start;
            while __op2_p0 + #LANES <= __op2_range.end {
                // SAFETY: as for one element (below), for each of the group's.
                #[allow(unused_unsafe)]
                unsafe {
                    #(#inits)*
                    for __op2_l in 0..#LANES {
                        let __op2_e = __op2_p0 + __op2_l;
                        #(#fills)*
                    }
                    for __op2_l in 0..#LANES {
                        #kernel::#native(#(#calls),*);
                    }
                    for __op2_l in 0..#LANES {
                        #[allow(unused_variables)]
                        let __op2_e = __op2_p0 + __op2_l;
                        #(#scatters)*
                    }
                }
                __op2_p0 += #LANES;
            }
            for __op2_e in __op2_p0..__op2_range.end {
                #anywhere
            }
        }
    }
}

fn scatter_op(access: Access, suffix: &str) -> Option<syn::Ident> {
    let base = match access {
        Access::Read => return None,
        Access::Write | Access::Rw => "store",
        Access::Inc => "add",
        Access::Min => "min",
        Access::Max => "max",
    };
    Some(format_ident!("{}{}", base, suffix))
}
