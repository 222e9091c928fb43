//! The group path of `par_loop!`'s native body: a loop over a whole set
//! runs the kernel across the lanes of staging arrays, which the compiler
//! vectorises, where every argument allows it.

use op2_kernel_abi::{Access, ArgForm};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::LoopArg;

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
pub(super) struct Lanes {
    /// Whether every argument allows groups.
    ok: bool,
    gathers: bool,
    inits: Vec<TokenStream>,
    fills: Vec<TokenStream>,
    calls: Vec<TokenStream>,
    scatters: Vec<TokenStream>,
    /// Each argument's view, the trait bounding its type and its loop
    /// position, for the AVX2 copy (a generic function of the views).
    views: Vec<(syn::Ident, TokenStream, usize)>,
    /// Whether every entry index is a literal (the copy sees no locals).
    literal_indices: bool,
    /// Whether every argument is a Dat or Global, directly or through a
    /// map: the forms the AVX2 copy takes.
    simple: bool,
    /// The arguments as the lane path stages them (see `lane_loop`).
    lane_args: Vec<LaneArg>,
    /// Whether every argument allows the lane path.
    lane_ok: bool,
    /// Whether an argument increments through a map entry: the loops the
    /// lane path is for.
    lane_incs: bool,
}

/// One argument of the lane path: its loop position, view, mode and, for
/// `m[i]`, the entry.
struct LaneArg {
    k: usize,
    view: syn::Ident,
    access: Access,
    entry: Option<LaneEntry>,
}

/// Entry `i` of `d(ACCESS, m[i])` on the lane path.
struct LaneEntry {
    /// `i`: a literal, or the name it is bound to once per loop.
    index: TokenStream,
    /// Arguments with one key share their entries: the map and `i` as
    /// written where the map is a plain place (`pecell`, `self.pecell`),
    /// else the argument's own position.
    key: String,
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
            views: Vec::new(),
            literal_indices: true,
            simple: true,
            lane_args: Vec::new(),
            lane_ok: true,
            lane_incs: false,
        }
    }
}

impl Lanes {
    /// An argument of another form (ragged, random streams, ...): the loop
    /// stays scalar and has no AVX2 copy.
    pub(super) fn other(&mut self) {
        self.ok = false;
        self.simple = false;
        self.lane_ok = false;
    }

    /// Adds argument `k`: a Dat or Global, directly or through a map
    /// (`index` the entry's, for `m[i]`). Any other form keeps the loop
    /// scalar.
    pub(super) fn arg(&mut self, a: &LoopArg, k: usize, index: &Option<TokenStream>) {
        let v = format_ident!("__op2_v{}", k);
        self.literal_indices &= a.index.as_ref().is_none_or(|i| matches!(i, syn::Expr::Lit(_)));
        let view_trait = if a.form == ArgForm::Direct {
            quote!(::op2::__private::DirectView)
        } else {
            quote!(::op2::__private::IndirectView)
        };
        self.views.push((v.clone(), view_trait, k));
        self.lane_arg(a, k, &v, index);
        let mutable = a.access != Access::Read;
        let safe = match (a.form, a.access) {
            (ArgForm::Direct, access) => !matches!(access, Access::Min | Access::Max),
            (ArgForm::MapEntry | ArgForm::MapAll, access) => access == Access::Read,
            _ => false,
        };
        if !safe {
            self.ok = false;
            return;
        }
        self.gathers |= a.form != ArgForm::Direct;
        let ls = format_ident!("__op2_ls{}", k);
        let dv = quote!(::op2::__private::DirectView);
        let iv = quote!(::op2::__private::IndirectView);
        let zeroed = matches!(a.access, Access::Write | Access::Inc);
        let (zero, load, op) = match (a.form, index) {
            (ArgForm::Direct, _) => (
                quote!(#dv::zero(#v)),
                quote!(#dv::load(#v, __op2_e)),
                scatter_op(a.access, "").map(|op| quote!(#dv::#op(#v, __op2_e, &#ls[__op2_l]);)),
            ),
            (ArgForm::MapEntry, Some(i)) => (
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

    /// Records argument `k` for the lane path: a Dat or Global directly
    /// (but MIN and MAX, which may be a Global's running reduction), or
    /// read or incremented through a map entry. Increments are staged as
    /// zeros and added back lane by lane in element order, as the scalar
    /// path adds them; nothing the loop writes is read through a map (one
    /// mode per Dat), so no lane reads what an earlier lane writes.
    fn lane_arg(&mut self, a: &LoopArg, k: usize, view: &syn::Ident, index: &Option<TokenStream>) {
        let ok = match (a.form, a.access) {
            (ArgForm::Direct, access) => !matches!(access, Access::Min | Access::Max),
            (ArgForm::MapEntry, Access::Read | Access::Inc) => index.is_some(),
            _ => false,
        };
        self.lane_ok &= ok;
        self.lane_incs |= a.form == ArgForm::MapEntry && a.access == Access::Inc;
        let entry = match (a.form, index) {
            (ArgForm::MapEntry, Some(index)) => Some(LaneEntry {
                key: match &a.map {
                    Some(m) if plain_place(m) => format!("{} [{}]", quote!(#m), index),
                    _ => format!("argument {k}"),
                },
                index: index.clone(),
            }),
            _ => None,
        };
        self.lane_args.push(LaneArg {
            k,
            view: view.clone(),
            access: a.access,
            entry,
        });
    }

    /// The loop over positions `__op2_range` of a whole set: groups where
    /// every argument allows them, then the rest one element at a time
    /// (`anywhere`, the scalar element). On x86-64 the group loop also has
    /// an AVX2 copy, a generic function of the views compiled with
    /// `#[target_feature]`, which runs where the CPU has AVX2 and FMA
    /// and the runtime allows it (`Partials::wide_vectors`): four lanes per vector instead of
    /// two, as `jit`'s C gets from `-march=native`. Rust never fuses a
    /// multiply and an add, so both copies give the same bits.
    pub(super) fn whole_set_loop(
        &self,
        kernel: &syn::Path,
        native: &syn::Ident,
        anywhere: &TokenStream,
    ) -> TokenStream {
        let scalar = quote! {
            for __op2_e in __op2_range {
                #anywhere
            }
        };
        let group = if self.ok && self.gathers {
            self.group_loop(kernel, native, anywhere)
        } else {
            scalar
        };
        let group = if self.lane_ok && self.lane_incs {
            let (lanes, shared) = self.lane_loop(kernel, anywhere);
            // A constant: the kernel says whether its body runs on lanes.
            quote! {
                if #kernel::__OP2_LANES && #shared {
                    #lanes
                } else {
                    #group
                }
            }
        } else {
            group
        };
        if !(self.simple && self.literal_indices) {
            return group;
        }
        let names: Vec<_> = self.views.iter().map(|(v, _, _)| v).collect();
        let traits = self.views.iter().map(|(_, t, _)| t);
        let positions = self.views.iter().map(|(_, _, k)| k);
        let generics: Vec<_> = (0..names.len()).map(|k| format_ident!("__OP2_V{}", k)).collect();
        quote! {
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma")]
            #[allow(clippy::too_many_arguments)]
            unsafe fn __op2_wide<#(#generics: #traits<<#kernel as ::op2::__private::ParamElem<#positions>>::T>),*>(
                #(#names: #generics,)*
                __op2_range: ::core::ops::Range<usize>,
            ) {
                #group
            }
            if __op2_p.wide_vectors() {
                // SAFETY: the partials say so only where the CPU has AVX2
                // and FMA (`Partials::with_wide_vectors` checks); the views
                // are this loop's, as for the baseline copy below.
                #[cfg(target_arch = "x86_64")]
                unsafe {
                    __op2_wide(#(#names,)* __op2_range)
                };
            } else {
                #group
            }
        }
    }

    /// The group loop itself (see `whole_set_loop`).
    fn group_loop(&self, kernel: &syn::Path, native: &syn::Ident, anywhere: &TokenStream) -> TokenStream {
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

impl Lanes {
    /// The lane path: groups of `LANES` elements, each argument gathered
    /// row by row and staged component-major, the kernel's lane copy run
    /// lane by lane in a loop the compiler vectorises (one component of
    /// every lane a vector), then each lane's scatter in element order; the
    /// rest one at a time. Arguments through one map entry (`q(READ,
    /// pecell[0])`, `res(INC, pecell[0])`) look it up once per element: the
    /// second half is the condition, checked at run time, that their views
    /// really have one source of entries, without which the loop keeps its
    /// other path.
    fn lane_loop(&self, kernel: &syn::Path, anywhere: &TokenStream) -> (TokenStream, TokenStream) {
        let private = quote!(::op2::__private);
        let dv = quote!(#private::DirectView);
        let iv = quote!(#private::IndirectView);
        let stage = quote!(#private::LaneStage);
        let (mut lookups, mut gathers, mut stagings, mut calls) = (vec![], vec![], vec![], vec![]);
        let (mut rows, mut scatters, mut shared) = (vec![], vec![], vec![quote!(true)]);
        // Each key's entries, once per group: (key, their array, its view).
        let mut looked_up: Vec<(&str, syn::Ident, &syn::Ident)> = Vec::new();
        for LaneArg {
            k,
            view: v,
            access,
            entry,
        } in &self.lane_args
        {
            let soa = quote!(<#kernel as #private::LaneParam<#k>>::Soa);
            let (ls, g, r) = (
                format_ident!("__op2_la{}", k),
                format_ident!("__op2_lg{}", k),
                format_ident!("__op2_lr{}", k),
            );
            let t = entry.as_ref().map(|LaneEntry { index, key }| {
                match looked_up.iter().find(|(seen, _, _)| seen == key) {
                    Some((_, t, first)) => {
                        shared.push(quote!(#iv::entry_source(#first) == #iv::entry_source(#v)));
                        t.clone()
                    }
                    None => {
                        let t = format_ident!("__op2_lt{}", k);
                        lookups.push(quote!(let #t = #iv::entries(#v, __op2_p0, #index);));
                        looked_up.push((key, t.clone(), v));
                        t
                    }
                }
            });
            if matches!(access, Access::Write | Access::Inc) {
                stagings.push(quote!(let mut #ls: #soa = #stage::zero();));
            } else {
                let load = match &t {
                    Some(t) => quote!(#iv::load_row(#v, #t[__op2_l])),
                    None => quote!(#dv::load(#v, __op2_e)),
                };
                lookups.push(quote!(let mut #g = <#soa as #stage>::zero_rows();));
                gathers.push(quote!(#g[__op2_l] = #load;));
                stagings.push(quote!(let mut #ls: #soa = #stage::from_rows(&#g);));
            }
            // The kernel's own view of the lane: a mutability mismatch is
            // reported by the scalar path and the argument check alone.
            calls.push(quote!(<#kernel as #private::LaneParam<#k>>::view(&mut #ls, __op2_l)));
            let Some(op) = scatter_op(*access, "") else {
                continue;
            };
            rows.push(quote!(let #r = #stage::rows(&#ls);));
            // Through a map entry, only INC takes the lane path (`lane_arg`).
            scatters.push(match &t {
                Some(t) => quote!(#iv::add_row(#v, #t[__op2_l], &#r[__op2_l]);),
                None => quote!(#dv::#op(#v, __op2_e, &#r[__op2_l]);),
            });
        }
        let lanes = quote! {
            let mut __op2_p0 = __op2_range.start;
            while __op2_p0 + #private::LANES <= __op2_range.end {
                // SAFETY: as for one element (below), for each of the group's;
                // arguments that share entries share their source (`shared`).
                #[allow(unused_unsafe)]
                unsafe {
                    #(#lookups)*
                    #[allow(unused_variables)]
                    for __op2_l in 0..#private::LANES {
                        let __op2_e = __op2_p0 + __op2_l;
                        #(#gathers)*
                    }
                    #(#stagings)*
                    for __op2_l in 0..#private::LANES {
                        #kernel::__op2_lane(#(#calls),*);
                    }
                    #(#rows)*
                    #[allow(unused_variables)]
                    for __op2_l in 0..#private::LANES {
                        let __op2_e = __op2_p0 + __op2_l;
                        #(#scatters)*
                    }
                }
                __op2_p0 += #private::LANES;
            }
            for __op2_e in __op2_p0..__op2_range.end {
                #anywhere
            }
        };
        (lanes, quote!((#(#shared)&&*)))
    }
}

/// The view's method that scatters a staging value back for `access`
/// (`store`, `add`, `min`, `max`, with `suffix`); none for READ.
pub(super) fn scatter_op(access: Access, suffix: &str) -> Option<syn::Ident> {
    let base = match access {
        Access::Read => return None,
        Access::Write | Access::Rw => "store",
        Access::Inc => "add",
        Access::Min => "min",
        Access::Max => "max",
    };
    Some(format_ident!("{}{}", base, suffix))
}

/// Whether `e` names a place without running code of its own: a path or a
/// field of one (`pecell`, `self.maps.pecell`), so two mentions are one map.
fn plain_place(e: &syn::Expr) -> bool {
    match e {
        syn::Expr::Path(p) => p.qself.is_none(),
        syn::Expr::Field(f) => plain_place(&f.base),
        syn::Expr::Paren(p) => plain_place(&p.expr),
        _ => false,
    }
}
