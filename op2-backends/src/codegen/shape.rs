//! A loop as the code generators see it, `LoopShape`: per argument, how it is
//! reached (`ArgKind`: direct, one map entry, a whole map, a ragged map, a Dat
//! read whole, a Global), its type, dim and access. It is built once from a
//! `ParLoop` and keys the executors' caches of compiled loops, so loops of one
//! shape share their generated code.

use op2_core::{Access, ArgData, ArgRoute, KernelInfo, MapIndex, ParLoop, ReductionLayout, ScalarType};

/// How one argument is reached, as far as generated code cares: the
/// runtime's `ArgRoute`, with a map's arity and entry resolved and Globals
/// apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArgKind {
    /// A Dat on the iteration set.
    Direct,
    /// `d(ACCESS, m[index])` with a map of `arity` entries.
    MapEntry {
        /// The map's arity.
        arity: usize,
        /// The entry.
        index: usize,
    },
    /// `d(ACCESS, m)`: all `arity` entries.
    MapAll {
        /// The map's arity.
        arity: usize,
    },
    /// `d(ACCESS, r[..])`: all targets of a ragged map (READ or INC); the
    /// kernel reaches them itself (see `element.rs`).
    Ragged,
    /// `m(READ, list[..])`: a Dat read whole (a message list's variable, or
    /// its bins); the kernel indexes it itself, as a ragged argument whose
    /// targets are the first `count` elements in order.
    Whole,
    /// A Global; reductions have a slot at this word offset of the partials.
    Global {
        /// Word offset of the reduction slot (`None` for READ).
        slot: Option<usize>,
    },
}

/// One argument's shape: everything generated code depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ArgShape {
    /// How it is reached.
    pub kind: ArgKind,
    /// The access mode.
    pub access: Access,
    /// Element type.
    pub scalar: ScalarType,
    /// Values per element.
    pub dim: usize,
    /// Whether the values lie component by component (struct of arrays, on
    /// devices only): component `c` of element `e` at `arg{k}[e + c *
    /// stride{k}]`, the entry point taking `long stride{k}` after `arg{k}`.
    /// Only for Dats reached directly or through a map.
    pub columns: bool,
    /// Whether the argument's map has 64-bit entries (`Map::new_long`):
    /// generated code then reads `map{k}` as 64-bit integers, and every other
    /// map's as 32-bit ones.
    pub long_map: bool,
}

/// A loop's shape: the kernel, each argument's shape and whether the loop
/// runs over a subset. Generated code depends on this and nothing else (never
/// on set sizes or which subset), so it keys the in-memory code caches.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LoopShape {
    /// The kernel's name.
    pub kernel: &'static str,
    /// Address of the kernel's C source: two kernels of one name in different
    /// modules are different loops.
    pub source_id: usize,
    /// The arguments.
    pub args: Vec<ArgShape>,
    /// 64-bit words of reduction partials per block.
    pub partial_words: usize,
    /// Whether the loop runs over a subset: the generated entry then takes
    /// the subset's elements (`elems`) and maps each position to its element.
    pub subset: bool,
}

impl LoopShape {
    /// The shape of a (validated) loop.
    pub fn of(lp: &ParLoop<'_>, layout: &ReductionLayout) -> LoopShape {
        let args = lp
            .args
            .iter()
            .enumerate()
            .map(|(k, a)| ArgShape {
                kind: match (a.data, a.route) {
                    (ArgData::Global(_), _) => ArgKind::Global {
                        slot: layout.slot_offset(k),
                    },
                    (ArgData::Dat(_), ArgRoute::Ragged(_)) => ArgKind::Ragged,
                    (ArgData::Dat(_), ArgRoute::Whole(_)) => ArgKind::Whole,
                    (ArgData::Dat(_), ArgRoute::Direct) => ArgKind::Direct,
                    (ArgData::Dat(_), ArgRoute::Map(m)) => match m.index {
                        MapIndex::Entry(index) => ArgKind::MapEntry {
                            arity: m.map.arity(),
                            index,
                        },
                        MapIndex::All => ArgKind::MapAll { arity: m.map.arity() },
                    },
                },
                access: a.access,
                scalar: a.data.scalar(),
                dim: a.data.dim(),
                // Device executors choose per Dat (`device/layouts.rs`).
                columns: false,
                long_map: matches!(a.route, ArgRoute::Map(m) if m.map.is_long()),
            })
            .collect();
        LoopShape {
            kernel: lp.kernel.name,
            source_id: lp.kernel.c_source.as_ptr() as usize,
            args,
            partial_words: layout.words_per_chunk(),
            subset: lp.subset.is_some(),
        }
    }

    /// Whether an argument goes through a ragged map or is read whole (the
    /// translated kernel then takes `OP2_GLOBAL` pointers, which the wrapper
    /// defines).
    pub fn has_ragged(&self) -> bool {
        self.args
            .iter()
            .any(|a| matches!(a.kind, ArgKind::Ragged | ArgKind::Whole))
    }

    /// This shape with every argument that can lie in columns in columns
    /// (a Dat of more than one value per element, reached directly or
    /// through a map, as the default layout puts a mesh's Dats on a device);
    /// `None` when no argument can. For tests and snapshots: device
    /// executors choose per Dat.
    pub fn in_columns(&self) -> Option<LoopShape> {
        let mut shape = self.clone();
        let mut any = false;
        for a in &mut shape.args {
            let reachable = matches!(
                a.kind,
                ArgKind::Direct | ArgKind::MapEntry { .. } | ArgKind::MapAll { .. }
            );
            a.columns = reachable && a.dim > 1;
            any |= a.columns;
        }
        any.then_some(shape)
    }

    /// The shape of a loop over a whole set described without live data (for
    /// tests and snapshots): `args` as given.
    pub fn from_parts(kernel: &KernelInfo, args: Vec<ArgShape>, partial_words: usize) -> LoopShape {
        LoopShape {
            kernel: kernel.name,
            source_id: kernel.c_source.as_ptr() as usize,
            args,
            partial_words,
            subset: false,
        }
    }
}
