//! Reduction partials: `ReductionLayout` places each reduction Global's partial result in
//! a chunk's scratch buffer, and `Partials` is one chunk's scratch as the loop body sees
//! it. Every chunk of work gets its own partials, combined into the Globals in a fixed
//! order, so results do not depend on scheduling. All backends use it, through the
//! `GlobalHandle` hooks of `arg.rs`.
use crate::{ArgData, ArgSpec};

/// Where each reduction Global's partial result sits in a chunk's scratch
/// buffer. Every chunk of work (the whole set in `seq`, a block in threaded
/// backends) gets its own partials, combined in a fixed order at the end, so
/// results do not depend on scheduling.
#[derive(Clone, Debug, Default)]
pub struct ReductionLayout {
    /// Word offset of each argument's slot; `usize::MAX` for non-reductions.
    offsets: Vec<usize>,
    words: usize,
}

impl ReductionLayout {
    /// The layout for a loop's arguments.
    pub fn new(args: &[ArgSpec<'_>]) -> ReductionLayout {
        let mut words = 0;
        let offsets = args
            .iter()
            .map(|a| match a.data {
                ArgData::Global(g) if a.access.is_reduction() => {
                    let at = words;
                    words += (g.dim() * g.scalar().size()).div_ceil(8);
                    at
                }
                _ => usize::MAX,
            })
            .collect();
        ReductionLayout { offsets, words }
    }

    /// Whether the loop reduces nothing.
    pub fn is_empty(&self) -> bool {
        self.words == 0
    }

    /// Word offset of argument `arg`'s slot, if it is a reduction.
    pub fn slot_offset(&self, arg: usize) -> Option<usize> {
        self.offsets.get(arg).copied().filter(|&o| o != usize::MAX)
    }

    /// 64-bit words one chunk's partials take.
    pub fn words_per_chunk(&self) -> usize {
        self.words
    }

    /// Starts one chunk's partials (zero for INC, current value for MIN/MAX).
    pub fn init(&self, args: &[ArgSpec<'_>], chunk: &mut [u64]) {
        self.for_each_slot(args, |g, access, range| g.init_partial(access, &mut chunk[range]));
    }

    /// Folds one chunk's partials into the Globals.
    pub fn combine(&self, args: &[ArgSpec<'_>], chunk: &[u64]) {
        self.for_each_slot(args, |g, access, range| g.combine_partial(access, &chunk[range]));
    }

    /// Partials for `units` chunks, each initialised (zero for INC, the
    /// Global's value for MIN/MAX), one after the other.
    pub fn new_partials(&self, args: &[ArgSpec<'_>], units: usize) -> Vec<u64> {
        let mut buf = vec![0u64; units * self.words];
        if self.words > 0 {
            buf.chunks_mut(self.words).for_each(|chunk| self.init(args, chunk));
        }
        buf
    }

    /// Folds every chunk's partials into the Globals, in chunk order.
    pub fn combine_all(&self, args: &[ArgSpec<'_>], buf: &[u64]) {
        if self.words > 0 {
            buf.chunks(self.words).for_each(|chunk| self.combine(args, chunk));
        }
    }

    /// A view of one chunk's scratch buffer for the loop body.
    pub fn partials<'a>(&'a self, chunk: &'a mut [u64]) -> Partials<'a> {
        Partials {
            words: chunk,
            offsets: &self.offsets,
            wide_vectors: false,
        }
    }

    fn for_each_slot(
        &self,
        args: &[ArgSpec<'_>],
        mut f: impl FnMut(&dyn crate::GlobalHandle, crate::Access, std::ops::Range<usize>),
    ) {
        for (a, &at) in args.iter().zip(&self.offsets) {
            if let (ArgData::Global(g), true) = (a.data, at != usize::MAX) {
                let len = (g.dim() * g.scalar().size()).div_ceil(8);
                f(g, a.access, at..at + len);
            }
        }
    }
}

/// One chunk's reduction scratch, handed to the loop body.
pub struct Partials<'a> {
    words: &'a mut [u64],
    offsets: &'a [usize],
    wide_vectors: bool,
}

impl Partials<'_> {
    /// These partials, telling the body it may run its AVX2 copy when `on`
    /// ([`crate::ParLoop::wide_vectors`]) and the CPU has AVX2 and FMA
    /// (checked here too, so no executor can send a body to instructions
    /// the CPU lacks).
    pub fn with_wide_vectors(self, on: bool) -> Self {
        Partials {
            wide_vectors: on && crate::view::cpu_has_wide_vectors(),
            ..self
        }
    }

    /// Whether the body may run its AVX2 copy: the runtime allows it and
    /// the CPU has AVX2 and FMA.
    #[inline]
    pub fn wide_vectors(&self) -> bool {
        self.wide_vectors
    }

    /// Pointer to argument `arg`'s partial values.
    ///
    /// # Panics
    /// If `arg` is not a reduction argument (a bug in generated code).
    pub fn slot<T>(&mut self, arg: usize) -> *mut T {
        let at = self.offsets[arg];
        assert!(at != usize::MAX, "argument {arg} is not a reduction");
        self.words[at..].as_mut_ptr() as *mut T
    }

    /// Partials for a loop without reductions.
    pub fn none() -> Partials<'static> {
        Partials {
            words: &mut [],
            offsets: &[],
            wide_vectors: false,
        }
    }
}
