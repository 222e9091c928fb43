//! One lowering function per argument form of `par_loop!` (the forms of
//! `op2_kernel_abi::ArgForm`): each returns the pieces the argument adds to
//! the expansion, which `generate` splices in at their places. A new form
//! is one variant of `ArgForm`, one function here and one arm in the code
//! generators' `element.rs`.

use op2_kernel_abi::{Access, ArgForm};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::{Expr, Ident};

use super::lanes::{scatter_op, Lanes};
use super::LoopArg;

/// What one argument adds to the expansion, in the order the expansion
/// uses them. Paths written inside `quote_spanned!` carry the argument's
/// span, so that the compiler's errors point at the argument; interpolated
/// ones (`#dv`, `#iview`, ...) keep the call's, which folds the errors of
/// one argument's gather and scatter into one.
#[derive(Default)]
pub(super) struct Pieces {
    /// Compile-time checks against the kernel's metadata.
    pub checks: Vec<TokenStream>,
    /// Bindings of the argument's expressions, before the loop; an error
    /// here ends the loop before it runs (`break '__op2_loop`).
    pub bindings: Vec<TokenStream>,
    /// Bindings made before anything can end the loop early (lifecycles,
    /// whose fates are applied or forgotten whatever happens).
    pub life_bindings: Vec<TokenStream>,
    /// The argument's descriptions, one per loop position it takes.
    pub specs: Vec<TokenStream>,
    /// Its views of the data, made at the body's first call.
    pub views: Vec<TokenStream>,
    /// The names the views are bound to, one per loop position.
    pub view_names: Vec<Ident>,
    /// Per chunk: views bound to the chunk's partials, buffers.
    pub binds: Vec<TokenStream>,
    /// Per element, before the call: the staging values.
    pub gathers: Vec<TokenStream>,
    /// The kernel's argument.
    pub call_args: Vec<TokenStream>,
    /// Per element, after the call: the staging values written back.
    pub scatters: Vec<TokenStream>,
    /// Views through a Map or a Stencil, whose runs the body follows.
    pub map_views: Vec<Ident>,
    /// Random streams, told after the loop ran.
    pub draws: Vec<Ident>,
    /// Lifecycles, applied after the loop ran.
    pub lives: Vec<Ident>,
}

impl Pieces {
    /// Appends `other`'s pieces after these.
    pub fn extend(&mut self, other: Pieces) {
        self.checks.extend(other.checks);
        self.bindings.extend(other.bindings);
        self.life_bindings.extend(other.life_bindings);
        self.specs.extend(other.specs);
        self.views.extend(other.views);
        self.view_names.extend(other.view_names);
        self.binds.extend(other.binds);
        self.gathers.extend(other.gathers);
        self.call_args.extend(other.call_args);
        self.scatters.extend(other.scatters);
        self.map_views.extend(other.map_views);
        self.draws.extend(other.draws);
        self.lives.extend(other.lives);
    }
}

/// The loop positions an argument of `form` takes: two for the forms whose
/// kernel parameter becomes two hidden ones.
pub(super) fn positions(form: ArgForm) -> usize {
    match form {
        ArgForm::Draw | ArgForm::Near => 2,
        _ => 1,
    }
}

/// Argument `a` at loop position `k` of the kernel whose metadata is
/// `info`; `lanes` learns whether it allows the group path.
pub(super) fn lower(a: &LoopArg, k: usize, info: &TokenStream, lanes: &mut Lanes) -> Pieces {
    let mut p = Pieces {
        view_names: vec![format_ident!("__op2_v{}", k)],
        ..Pieces::default()
    };
    let access = access_tokens(a.access);
    let form = form_tokens(a.form);
    p.checks
        .push(quote_spanned!(a.span=> const _: () = ::op2::__private::check_arg(&#info, #k, #form, #access);));
    let index = match a.form {
        ArgForm::Direct | ArgForm::MapEntry | ArgForm::MapAll | ArgForm::Ragged => data_bindings(a, k, &mut p),
        _ => None,
    };
    match a.form {
        ArgForm::Direct | ArgForm::MapEntry | ArgForm::MapAll => lanes.arg(a, k, &index),
        _ => lanes.other(),
    }
    match a.form {
        ArgForm::Direct => lower_direct(a, k, &mut p),
        ArgForm::MapEntry => lower_map_entry(a, k, &index.expect("an entry's index"), &mut p),
        ArgForm::MapAll => lower_map_all(a, k, &mut p),
        ArgForm::Ragged => lower_ragged(a, k, &mut p),
        ArgForm::Draw => lower_draw(a, k, &mut p),
        ArgForm::Near => lower_near(a, k, &mut p),
        ArgForm::Fate => lower_fate(a, k, &mut p),
    }
    p
}

/// `::op2::Access::<mode>` (the variant's name is its `Debug` form).
fn access_tokens(access: Access) -> TokenStream {
    let name = format_ident!("{}", format!("{access:?}"));
    quote!(::op2::Access::#name)
}

/// `::op2::__private::ArgForm::<form>`.
fn form_tokens(form: ArgForm) -> TokenStream {
    let name = format_ident!("{}", format!("{form:?}"));
    quote!(::op2::__private::ArgForm::#name)
}

/// For an argument that holds data (a Dat or Global, directly, through a
/// map or a ragged map): binds the data `__op2_d<k>`, the map `__op2_m<k>`
/// and a computed entry `__op2_i<k>`, and passes the staging value (or the
/// ragged row) to the kernel. Returns the entry's index for `m[i]`; a
/// literal index stays a literal so the optimiser sees it.
fn data_bindings(a: &LoopArg, k: usize, p: &mut Pieces) -> Option<TokenStream> {
    let data = &a.data;
    let (d, s, v) = names(k);
    p.bindings.push(quote_spanned!(a.span=> let #d = &(#data);));
    if let Some(map) = &a.map {
        let m = format_ident!("__op2_m{}", k);
        // A Map or a Stencil (or a RaggedMap or a MessageList): the traits
        // pick the view at compile time.
        p.bindings.push(quote_spanned!(a.span=> let #m = &(#map);));
    }
    let index = match &a.index {
        Some(Expr::Lit(l)) => Some(l.to_token_stream()),
        Some(ix) => {
            let i = format_ident!("__op2_i{}", k);
            p.bindings.push(quote_spanned!(a.span=> let #i: usize = #ix;));
            Some(i.to_token_stream())
        }
        None => None,
    };
    let mutable = a.access != Access::Read;
    p.call_args.push(match (a.form, mutable) {
        // A ragged argument's staging is a buffer reused from element to
        // element; a READ one is read in place, as a Row.
        (ArgForm::Ragged, true) => quote!(#s.as_mut_slice()),
        (ArgForm::Ragged, false) => quote!(#v.row(__op2_e)),
        (_, true) => quote!(&mut #s),
        (_, false) => quote!(&#s),
    });
    index
}

/// The data, staging and view names of loop position `k`.
fn names(k: usize) -> (Ident, Ident, Ident) {
    (
        format_ident!("__op2_d{}", k),
        format_ident!("__op2_s{}", k),
        format_ident!("__op2_v{}", k),
    )
}

/// `d(ACCESS)`: a Dat on the iteration set, or a Global.
fn lower_direct(a: &LoopArg, k: usize, p: &mut Pieces) {
    let (d, s, v) = names(k);
    let access = access_tokens(a.access);
    let dv = quote!(::op2::__private::DirectView);
    p.specs
        .push(quote_spanned!(a.span=> ::op2::__private::DirectArg::arg_spec(#d, #access)));
    p.views
        .push(quote_spanned!(a.span=> let #v = ::op2::__private::DirectArg::direct_view(#d, #k, #access);));
    p.binds.push(quote!(let #v = #dv::bind(#v, __op2_p);));
    let mut_kw = mut_kw(a);
    p.gathers.push(match a.access {
        Access::Write | Access::Inc => quote_spanned!(a.span=> let mut #s = #dv::zero(#v);),
        _ => quote_spanned!(a.span=> let #mut_kw #s = #dv::load(#v, __op2_e);),
    });
    if let Some(op) = scatter_op(a.access, "") {
        p.scatters.push(quote_spanned!(a.span=> #dv::#op(#v, __op2_e, &#s);));
    }
}

/// `d(ACCESS, m[i])`: entry `i` of a Map or a Stencil.
fn lower_map_entry(a: &LoopArg, k: usize, i: &TokenStream, p: &mut Pieces) {
    let (d, s, v) = names(k);
    let m = format_ident!("__op2_m{}", k);
    let access = access_tokens(a.access);
    let iarg = quote!(::op2::__private::IndirectArg);
    let iview = quote!(::op2::__private::IndirectView);
    p.specs.push(
        quote_spanned!(a.span=> ::op2::__private::indirect_arg_spec(#m, #d, #access, ::op2::__private::MapIndex::Entry(#i))),
    );
    p.views.push(quote_spanned!(a.span=> let #v = #iarg::view(#m, #d);));
    p.binds.push(quote!(let #v = #v;));
    p.map_views.push(v.clone());
    let mut_kw = mut_kw(a);
    p.gathers.push(match a.access {
        Access::Write | Access::Inc => quote_spanned!(a.span=> let mut #s = #iview::zero(#v);),
        _ => quote_spanned!(a.span=> let #mut_kw #s = #iview::load_at(#v, __op2_e, #i, __OP2_INTERIOR);),
    });
    if let Some(op) = scatter_op(a.access, "_at") {
        p.scatters
            .push(quote_spanned!(a.span=> #iview::#op(#v, __op2_e, #i, &#s, __OP2_INTERIOR);));
    }
}

/// `d(ACCESS, m)`: every entry of a Map or a Stencil.
fn lower_map_all(a: &LoopArg, k: usize, p: &mut Pieces) {
    let (d, s, v) = names(k);
    let m = format_ident!("__op2_m{}", k);
    let access = access_tokens(a.access);
    let iarg = quote!(::op2::__private::IndirectArg);
    let iview = quote!(::op2::__private::IndirectView);
    p.specs.push(
        quote_spanned!(a.span=> ::op2::__private::indirect_arg_spec(#m, #d, #access, ::op2::__private::MapIndex::All)),
    );
    p.views.push(quote_spanned!(a.span=> let #v = #iarg::view(#m, #d);));
    p.binds.push(quote!(let #v = #v;));
    p.map_views.push(v.clone());
    let mut_kw = mut_kw(a);
    p.gathers.push(match a.access {
        Access::Write | Access::Inc => quote_spanned!(a.span=> let mut #s = #iview::zero_all(#v);),
        _ => quote_spanned!(a.span=> let #mut_kw #s = #iview::load_all(#v, __op2_e, __OP2_INTERIOR);),
    });
    if let Some(op) = scatter_op(a.access, "_all") {
        p.scatters
            .push(quote_spanned!(a.span=> #iview::#op(#v, __op2_e, &#s, __OP2_INTERIOR);));
    }
}

/// `d(ACCESS, r[..])`: every target of a RaggedMap, or every message of a
/// MessageList (the `SliceSource` picks the view).
fn lower_ragged(a: &LoopArg, k: usize, p: &mut Pieces) {
    let (d, s, v) = names(k);
    let m = format_ident!("__op2_m{}", k);
    let access = access_tokens(a.access);
    let source = quote!(::op2::__private::SliceSource);
    p.specs
        .push(quote_spanned!(a.span=> #source::slice_arg_spec(#m, #d, #access)));
    p.views
        .push(quote_spanned!(a.span=> let #v = #source::slice_view(#m, #d);));
    if a.access != Access::Read {
        // Room for the largest row: no growth inside the loop.
        p.binds
            .push(quote_spanned!(a.span=> let mut #s = ::std::vec::Vec::with_capacity(#source::slice_capacity(#m));));
        p.gathers.push(quote_spanned!(a.span=> #v.zero_into(__op2_e, &mut #s);));
        p.scatters.push(quote_spanned!(a.span=> #v.add_from(__op2_e, &#s);));
    }
}

/// `s(DRAW)` at positions `k` (the set's global ids, a direct READ Dat) and
/// `k + 1` (`[seed, counter]`, a READ Global): what the `&mut Philox`
/// parameter's two hidden parameters receive in generated code. The native
/// body makes the element's stream from the id and passes it.
fn lower_draw(a: &LoopArg, k: usize, p: &mut Pieces) {
    let (streams, stream, view) = names(k);
    let args = format_ident!("__op2_r{}", k);
    let data = &a.data;
    let read = quote!(::op2::Access::Read);
    let private = quote!(::op2::__private);
    p.bindings
        .push(quote_spanned!(a.span=> let #streams: &::op2::RandomStreams = &(#data);));
    // The ids Dat and the key Global; an error ends the loop before it runs.
    p.bindings.push(quote_spanned!(a.span=>
        let #args = match ::op2::RandomStreams::loop_args(#streams, __op2_set) {
            ::core::result::Result::Ok(r) => r,
            ::core::result::Result::Err(e) => break '__op2_loop ::core::result::Result::Err(e),
        };
    ));
    p.specs
        .push(quote_spanned!(a.span=> #private::DirectArg::arg_spec(&#args.ids, #read)));
    p.specs
        .push(quote_spanned!(a.span=> #private::DirectArg::arg_spec(&#args.key, #read)));
    p.views.push(quote_spanned!(a.span=>
        let #view = (#private::DirectArg::direct_view(&#args.ids, #k, #read), #args.seed, #args.counter);
    ));
    p.gathers.push(quote_spanned!(a.span=>
        let mut #stream = {
            let id: i64 = #private::DirectView::load(#view.0, __op2_e);
            ::op2::Philox::new(#view.1, id as u64, #view.2)
        };
    ));
    p.call_args.push(quote!(&mut #stream));
    p.draws.push(streams);
}

/// `list(NEAR)` at positions `k` (the bins' offsets, a Dat read whole) and
/// `k + 1` (the grid, a READ Global): what the `&Spatial2d`/`&Spatial3d`/
/// `&Discrete2d` parameter's two hidden parameters receive in generated
/// code. The native body makes the parameter from the list's view, once
/// per chunk.
fn lower_near(a: &LoopArg, k: usize, p: &mut Pieces) {
    let (list, param, view) = names(k);
    let args = format_ident!("__op2_r{}", k);
    let data = &a.data;
    let read = quote!(::op2::Access::Read);
    let private = quote!(::op2::__private);
    p.bindings
        .push(quote_spanned!(a.span=> let #list: &::op2::MessageList = &(#data);));
    p.bindings.push(quote_spanned!(a.span=>
        let #args = match ::op2::MessageList::near_args(#list) {
            ::core::result::Result::Ok(r) => r,
            ::core::result::Result::Err(e) => break '__op2_loop ::core::result::Result::Err(e),
        };
    ));
    p.specs.push(quote_spanned!(a.span=> #private::near_bins_spec(&#args)));
    p.specs
        .push(quote_spanned!(a.span=> #private::DirectArg::arg_spec(#args.params, #read)));
    p.views.push(quote_spanned!(a.span=> let #view = #args.view();));
    p.binds
        .push(quote_spanned!(a.span=> let #param = #private::FromSpatialView::from_view(#view);));
    p.call_args.push(quote!(&#param));
}

/// `life(FATE)`: the agent's fate, a direct WRITE of the Lifecycle's fates,
/// applied after the loop (`lives`).
fn lower_fate(a: &LoopArg, k: usize, p: &mut Pieces) {
    let (_, s, v) = names(k);
    let life = format_ident!("__op2_l{}", k);
    let data = &a.data;
    let write = quote!(::op2::Access::Write);
    let private = quote!(::op2::__private);
    p.life_bindings
        .push(quote_spanned!(a.span=> let #life: &::op2::Lifecycle = &(#data);));
    p.specs
        .push(quote_spanned!(a.span=> #private::DirectArg::arg_spec(::op2::Lifecycle::fates(#life), #write)));
    p.views.push(
        quote_spanned!(a.span=> let #v = #private::DirectArg::direct_view(::op2::Lifecycle::fates(#life), #k, #write);),
    );
    p.binds.push(quote!(let #v = #private::DirectView::bind(#v, __op2_p);));
    p.gathers.push(quote!(let mut #s = ::op2::Fate::new();));
    p.call_args.push(quote!(&mut #s));
    p.scatters
        .push(quote!(#private::DirectView::store(#v, __op2_e, &::op2::Fate::flags(&#s));));
    p.lives.push(life);
}

/// `mut` for a staging value the kernel writes.
fn mut_kw(a: &LoopArg) -> TokenStream {
    if a.access == Access::Read {
        quote!()
    } else {
        quote!(mut)
    }
}
