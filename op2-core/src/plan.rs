//! The planner for indirect loops: `Plan` cuts a loop's range into blocks and colours
//! them so that no two blocks of one colour write a common map target; device backends
//! also get element colours inside each block, and host backends partitions whose
//! interiors run in parallel (`Plan::partitions`, a `Schedule`). `conflicts` finds the
//! arguments that need colouring (writes through a `Map` or `RaggedMap`, each a
//! `Reach`). Plans are cached by `PlanCache` and used by the `rayon`, `jit` and device
//! backends.
use std::ops::Range;
use std::sync::OnceLock;

use crate::{Access, ArgRoute, ArgSpec, Map, MapIndex, RaggedMap, Schedule, Set, Subset};

/// What a conflicting argument writes through.
#[derive(Clone, Copy)]
pub enum Reach<'a> {
    /// Entries of a map: one, or all of them.
    Map(&'a Map, MapIndex),
    /// All targets of a ragged map, as many as each element has.
    Ragged(&'a RaggedMap),
}

impl Reach<'_> {
    /// The set the targets lie in.
    pub fn target_set(&self) -> &Set {
        match self {
            Reach::Map(m, _) => m.to_set(),
            Reach::Ragged(r) => r.to_set(),
        }
    }

    /// The map's identity and which entries (`None`: a ragged map): what
    /// plans depend on.
    pub fn key(&self) -> (u64, Option<MapIndex>) {
        match self {
            Reach::Map(m, index) => (m.id(), Some(*index)),
            Reach::Ragged(r) => (r.id(), None),
        }
    }

    /// Whether the map still exists, without keeping it (the plan cache
    /// drops the plans of dropped maps).
    pub(crate) fn watch(&self) -> crate::plan_cache::Watch {
        match self {
            Reach::Map(m, _) => m.watch(),
            Reach::Ragged(r) => r.watch(),
        }
    }

    /// Calls `f` with each of element `e`'s targets.
    #[inline]
    fn for_each_target(&self, e: usize, mut f: impl FnMut(u64)) {
        match self {
            Reach::Map(m, index) => {
                let (a, table) = (m.arity(), m.table());
                match *index {
                    MapIndex::Entry(i) => f(table.get(e * a + i) as u64),
                    MapIndex::All => (e * a..(e + 1) * a).for_each(|k| f(table.get(k) as u64)),
                }
            }
            Reach::Ragged(r) => r.targets_of(e).iter().for_each(|&t| f(t as u64)),
        }
    }

    /// At most how many targets `len` elements reach: a map's entries per
    /// element times `len`; a ragged map's targets, which all its elements
    /// together reach (its rows differ in length, and the sum is the bound).
    fn reached_by(&self, len: usize) -> u64 {
        match self {
            Reach::Map(m, MapIndex::All) => (m.arity() as u64).saturating_mul(len as u64),
            Reach::Map(_, MapIndex::Entry(_)) => len as u64,
            Reach::Ragged(r) => r.targets().len() as u64,
        }
    }
}

/// One argument that makes a loop need colouring: it writes (INC, WRITE, RW,
/// MIN, MAX) through a map, so two elements may target the same Dat element.
#[derive(Clone, Copy)]
pub struct Conflict<'a> {
    /// What the argument writes through.
    pub reach: Reach<'a>,
    /// Which distinct Dat of the loop it targets (arguments with the same group
    /// conflict with each other; different groups never do).
    pub group: usize,
}

/// The conflicting arguments of a loop; empty when it needs no colouring.
pub fn conflicts<'a>(args: &[ArgSpec<'a>]) -> Vec<Conflict<'a>> {
    let mut dats: Vec<usize> = Vec::new();
    let mut out = Vec::new();
    for a in args {
        let reach = match a.route {
            ArgRoute::Map(m) => Reach::Map(m.map, m.index),
            ArgRoute::Ragged(r) => Reach::Ragged(r),
            ArgRoute::Direct | ArgRoute::Whole(_) => continue,
        };
        if a.access == Access::Read {
            continue;
        }
        let id = a.data.id();
        let group = match dats.iter().position(|&d| d == id) {
            Some(g) => g,
            None => {
                dats.push(id);
                dats.len() - 1
            }
        };
        out.push(Conflict { reach, group });
    }
    out
}

/// A [`Reach`] the plan keeps (for what it computes on first use).
#[derive(Clone, Debug)]
enum OwnedReach {
    Map(Map, MapIndex),
    Ragged(RaggedMap),
}

impl OwnedReach {
    fn of(r: &Reach<'_>) -> OwnedReach {
        match *r {
            Reach::Map(m, index) => OwnedReach::Map(m.clone(), index),
            Reach::Ragged(r) => OwnedReach::Ragged(r.clone()),
        }
    }

    fn reach(&self) -> Reach<'_> {
        match self {
            OwnedReach::Map(m, index) => Reach::Map(m, *index),
            OwnedReach::Ragged(r) => Reach::Ragged(r),
        }
    }
}

/// An execution plan for an indirect loop (docs/ARCHITECTURE.md, The planner): the
/// iteration range cut into blocks of consecutive positions, blocks coloured so
/// that no two blocks of one colour touch a common target of a conflicting
/// argument, and, for device backends, elements coloured inside each block;
/// for host backends, the range cut into partitions ([`Plan::partitions`]).
/// Each is computed when first asked for, so a backend pays only for what
/// it runs. Positions are elements of the iteration set,
/// or, for a loop over a [`Subset`], indices into its elements: the targets
/// of position `p` are those of element `subset.indices()[p]`.
#[derive(Clone, Debug)]
pub struct Plan {
    start: usize,
    /// The subset whose positions the plan covers (`None`: the set's elements).
    subset: Option<Subset>,
    set_size: usize,
    block_size: usize,
    /// The blocks' colours, computed on first use (host backends that run
    /// partitions never ask).
    blocks: OnceLock<BlockColours>,
    /// The conflicting arguments (what they write through, group), kept
    /// for the colourings and partitions computed on first use.
    conflicts: Vec<(OwnedReach, usize)>,
    elements: OnceLock<ElementColours>,
    /// The host schedules, computed on first use.
    colour_schedule: OnceLock<Schedule>,
    partitions: OnceLock<Schedule>,
}

#[derive(Clone, Debug)]
struct BlockColours {
    /// Block ids grouped by colour; colour `c` is `colour_blocks[colour_offsets[c]..colour_offsets[c + 1]]`.
    colour_blocks: Vec<u32>,
    colour_offsets: Vec<usize>,
    block_colours: Vec<u32>,
}

#[derive(Clone, Debug)]
struct ElementColours {
    colours: Vec<u32>,
    per_block: Vec<u32>,
}

/// The conflict targets of positions, computed when asked: position `p`
/// (counted from the first planned position) has the targets of its
/// element, numbered in one index space (each group's target set gets its
/// own range) so one mask array serves all. Nothing is stored per position:
/// a plan for 1.4 million edges would otherwise hold 23 MB of targets while
/// it colours (Airfoil's peak memory). When that space is far larger than
/// the targets the loop reaches (a few elements mapping into a set of
/// billions, `Set::new_long`), the reached targets are numbered densely
/// instead, so the masks stay the size of what the loop touches; colours do
/// not depend on the numbering.
struct Targets<'a> {
    reaches: Vec<(Reach<'a>, u64)>,
    elements: Option<&'a [i32]>,
    start: usize,
    space: usize,
    /// The reached targets, sorted, when numbered densely.
    dense: Option<Vec<u64>>,
}

impl<'a> Targets<'a> {
    /// The targets of `len` positions from `start`, whose elements are
    /// `elements[p]` (`None`: `p` itself).
    fn new(start: usize, len: usize, elements: Option<&'a [i32]>, conflicts: &'a [(OwnedReach, usize)]) -> Targets<'a> {
        let ngroups = conflicts.iter().map(|c| c.1 + 1).max().unwrap_or(0);
        let mut group_base = vec![0u64; ngroups + 1];
        for (reach, g) in conflicts {
            group_base[g + 1] = group_base[g + 1].max(reach.reach().target_set().total_size() as u64);
        }
        for g in 0..ngroups {
            group_base[g + 1] += group_base[g];
        }
        let reaches: Vec<(Reach<'a>, u64)> = conflicts.iter().map(|(r, g)| (r.reach(), group_base[*g])).collect();
        let space = group_base[ngroups];
        let reached: u64 = reaches
            .iter()
            .map(|(r, _)| r.reached_by(len))
            .fold(0, u64::saturating_add);
        let mut targets = Targets {
            reaches,
            elements,
            start,
            space: space as usize,
            dense: None,
        };
        // Masks for the whole space cost 4 bytes a target; beyond 32-bit
        // numbering, or far more than the loop reaches, number densely.
        if space > u32::MAX as u64 || space > reached.saturating_mul(8).saturating_add(1 << 20) {
            let mut all = Vec::new();
            targets.visit(0..len, |t| all.push(t));
            all.sort_unstable();
            all.dedup();
            targets.space = all.len();
            targets.dense = Some(all);
        }
        targets
    }

    /// Calls `f` with the targets (in the whole space) of the positions `rel`.
    fn visit(&self, rel: Range<usize>, mut f: impl FnMut(u64)) {
        for p in rel {
            let p = self.start + p;
            let e = self.elements.map_or(p, |ix| ix[p] as usize);
            for (r, base) in &self.reaches {
                r.for_each_target(e, |t| f(base + t));
            }
        }
    }

    /// Appends the targets of the positions `rel` (counted from the first
    /// planned position) to `out`, as mask indices.
    fn push(&self, rel: Range<usize>, out: &mut Vec<u32>) {
        match &self.dense {
            None => self.visit(rel, |t| out.push(t as u32)),
            // Every target was collected: the search finds it.
            Some(dense) => self.visit(rel, |t| out.push(dense.partition_point(|&d| d < t) as u32)),
        }
    }
}

/// The spread of the positions writing a target (last minus first; 0 for
/// a target with one writer), at its 90th percentile over the targets
/// written: how far apart the positions sharing a target typically lie.
fn writer_spread(targets: &Targets<'_>, n: usize) -> usize {
    let mut first = vec![u32::MAX; targets.space];
    let mut spread = vec![0u32; targets.space];
    let mut ts = Vec::new();
    for i in 0..n {
        ts.clear();
        targets.push(i..i + 1, &mut ts);
        for &t in &ts {
            let t = t as usize;
            if first[t] == u32::MAX {
                first[t] = i as u32;
            }
            spread[t] = i as u32 - first[t];
        }
    }
    let mut written: Vec<u32> = spread
        .into_iter()
        .zip(first)
        .filter(|&(_, f)| f != u32::MAX)
        .map(|(s, _)| s)
        .collect();
    if written.is_empty() {
        return 0;
    }
    let at = written.len() * 9 / 10;
    *written.select_nth_unstable(at).1 as usize
}

/// Items `0..colours.len()` grouped by colour, each colour's in increasing
/// order: colour `c` is `items[offsets[c]..offsets[c + 1]]`.
fn by_colour(colours: &[u32], ncolours: u32) -> (Vec<u32>, Vec<usize>) {
    let mut offsets = vec![0usize; ncolours as usize + 1];
    for &c in colours {
        offsets[c as usize + 1] += 1;
    }
    for c in 0..ncolours as usize {
        offsets[c + 1] += offsets[c];
    }
    let mut fill = offsets.clone();
    let mut items = vec![0u32; colours.len()];
    for (i, &c) in colours.iter().enumerate() {
        items[fill[c as usize]] = i as u32;
        fill[c as usize] += 1;
    }
    (items, offsets)
}

/// Greedy colouring of items `0..n`: each item gets the lowest colour not yet
/// taken by any of its targets, using a 32-bit mask per target; items that
/// find all 32 colours of a round taken wait for the next round, which starts
/// 32 colours higher. Returns the colours and their count.
fn colour(
    masks: &mut [u32],
    touched: &mut Vec<u32>,
    n: usize,
    targets: impl Fn(usize, &mut Vec<u32>),
) -> (Vec<u32>, u32) {
    let mut colours = vec![u32::MAX; n];
    let (mut left, mut base, mut used) = (n, 0u32, 0u32);
    let mut ts = Vec::new();
    while left > 0 {
        for (i, colour) in colours.iter_mut().enumerate() {
            if *colour != u32::MAX {
                continue;
            }
            ts.clear();
            targets(i, &mut ts);
            let mask = ts.iter().fold(0u32, |m, &t| m | masks[t as usize]);
            if mask == u32::MAX {
                continue; // all 32 colours of this round taken: next round
            }
            let c = (!mask).trailing_zeros();
            *colour = base + c;
            used = used.max(base + c + 1);
            left -= 1;
            for &t in &ts {
                let m = &mut masks[t as usize];
                if *m == 0 {
                    touched.push(t);
                }
                *m |= 1 << c;
            }
        }
        for &t in touched.iter() {
            masks[t as usize] = 0;
        }
        touched.clear();
        base += 32;
    }
    (colours, used)
}

impl Plan {
    /// Builds the plan for the elements `range` of a set (the elements a loop
    /// visits) with the given conflicting arguments.
    ///
    /// # Panics
    /// If `block_size` is 0.
    pub fn build(range: Range<usize>, block_size: usize, conflicts: &[Conflict<'_>]) -> Plan {
        Plan::build_over(range, None, block_size, conflicts)
    }

    /// Builds the plan for the positions `range` of a loop over `subset`
    /// (position `p` is element `subset.indices()[p]`), or over the elements
    /// `range` of a set when `subset` is `None`. Blocks hold `block_size`
    /// positions, or more where the range would make more than `u32::MAX`
    /// of them (their numbers are 32-bit).
    ///
    /// # Panics
    /// If `block_size` is 0, or `range` goes past the subset's indices.
    pub fn build_over(
        range: Range<usize>,
        subset: Option<&Subset>,
        block_size: usize,
        conflicts: &[Conflict<'_>],
    ) -> Plan {
        let (start, set_size) = (range.start, range.len());
        assert!(block_size > 0, "block size must be at least 1");
        // Blocks are numbered in 32 bits (colours, schedules, device
        // units): past u32::MAX blocks they grow instead of wrapping round.
        let block_size = block_size.max(set_size.div_ceil(u32::MAX as usize));
        let conflicts: Vec<(OwnedReach, usize)> =
            conflicts.iter().map(|c| (OwnedReach::of(&c.reach), c.group)).collect();
        Plan {
            start,
            subset: subset.cloned(),
            set_size,
            block_size,
            blocks: OnceLock::new(),
            conflicts,
            elements: OnceLock::new(),
            colour_schedule: OnceLock::new(),
            partitions: OnceLock::new(),
        }
    }

    /// The plan's blocks as a host schedule: one phase per colour, each
    /// block a unit (computed on first use).
    pub fn colour_schedule(&self) -> &Schedule {
        self.colour_schedule.get_or_init(|| Schedule::colours(self))
    }

    /// The plan's positions as contiguous partitions (a host schedule,
    /// computed on first use). The range is cut into partitions of whole
    /// blocks, [`Plan::PARTITION_SPREADS`] writer spreads long (at least
    /// [`Plan::MIN_PARTITIONS`] of them where the range has as many
    /// blocks), their number rounded up to a multiple of
    /// [`Plan::PARTITION_MULTIPLE`] where every partition keeps a block
    /// (else one partition per block), the blocks shared out evenly; a
    /// grain of [`Plan::GRAIN`] positions is *interior* when every target
    /// it writes is written by its partition alone. The first
    /// phase runs each partition's interior positions, in order, as one
    /// unit: partitions never share what their interiors write, so they
    /// run in parallel, each thread streaming through its own stretch of
    /// the mesh. The rest (the *boundary*: positions writing a target that
    /// another partition writes too) is cut into blocks of up to
    /// `block_size` consecutive boundary positions, coloured as the plan's
    /// blocks are, and runs after, a colour per phase. Nothing depends on
    /// the thread count, so neither do the results.
    pub fn partitions(&self) -> &Schedule {
        self.partitions.get_or_init(|| self.partition_schedule())
    }

    /// How many writer spreads long a partition of [`Plan::partitions`]
    /// is (a whole number of blocks): a target's writers lie within about
    /// one spread of each other (its 90th percentile over the targets), so
    /// a partition's boundary is about two spreads, 1/8 of the partition.
    /// Airfoil's 400x600 mesh has a spread of 2400 edges: 36 partitions of
    /// 10 blocks of 4096 edges, which [`Plan::PARTITION_MULTIPLE`] makes 48
    /// of 7 or 8 blocks, 84% of their edges interior.
    pub const PARTITION_SPREADS: usize = 16;

    /// Consecutive positions [`Plan::partitions`] classes as interior or
    /// boundary together (a grain is interior when all its positions are):
    /// in a mesh whose boundary positions interleave with interior ones,
    /// single positions would cut the interior into runs of a few
    /// elements, too short for the loops' groups of lanes.
    pub const GRAIN: usize = 32;

    /// [`Plan::partitions`] makes a multiple of this many partitions, as
    /// long as each keeps at least one block (else one per block). Host
    /// backends give each thread an equal share of a phase's units,
    /// contiguous (`ceil(units / threads)` each): with 36 partitions, 16
    /// threads would take 3 or 2 each and the phase would last 3
    /// partitions' time instead of 2.25; a multiple of 16 divides evenly
    /// among 1, 2, 4, 8 and 16 threads.
    pub const PARTITION_MULTIPLE: usize = 16;

    /// The fewest partitions [`Plan::partitions`] cuts a range of at least
    /// as many blocks into, whatever the spread: enough for 16 threads, and
    /// a mesh numbered without locality (a large spread) still runs in
    /// parallel, mostly in its boundary's colours.
    pub const MIN_PARTITIONS: usize = 32;

    fn partition_schedule(&self) -> Schedule {
        let (n, bs) = (self.set_size, self.block_size);
        // Owners are partition numbers below these two marks.
        const FREE: u32 = u32::MAX;
        const SHARED: u32 = u32::MAX - 1;
        // Positions and partitions are numbered in 32 bits here.
        if n >= u32::MAX as usize {
            return Schedule::colours(self);
        }
        let targets = Targets::new(
            self.start,
            n,
            self.subset.as_ref().map(Subset::indices),
            &self.conflicts,
        );
        // A partition's boundary is about twice the spread of a target's
        // writers long: partitions of PARTITION_SPREADS spreads keep it
        // near 1/8 of the positions, as long as that leaves at least
        // MIN_PARTITIONS of them.
        let wanted = writer_spread(&targets, n)
            .saturating_mul(Plan::PARTITION_SPREADS)
            .div_ceil(bs);
        let nblocks = n.div_ceil(bs);
        let most = nblocks / Plan::MIN_PARTITIONS;
        let size = wanted.min(most).max(1);
        // A multiple of PARTITION_MULTIPLE, cut as evenly as whole blocks
        // allow (sizes differ by one block at most): threads that take
        // equal shares of the interiors finish together.
        let nparts = nblocks
            .div_ceil(size)
            .next_multiple_of(Plan::PARTITION_MULTIPLE)
            .min(nblocks);
        let part = |p: usize| (p * nblocks / nparts * bs).min(n)..((p + 1) * nblocks / nparts * bs).min(n);
        let mut owner = vec![FREE; targets.space];
        let mut ts = Vec::new();
        for p in 0..nparts {
            ts.clear();
            targets.push(part(p), &mut ts);
            for &t in &ts {
                let o = &mut owner[t as usize];
                if *o == FREE {
                    *o = p as u32;
                } else if *o != p as u32 {
                    *o = SHARED;
                }
            }
        }
        let mut schedule = Schedule::new();
        // Boundary runs, relative to the first position, in order.
        let mut boundary: Vec<Range<usize>> = Vec::new();
        let mut interior = 0;
        for p in 0..nparts {
            let range = part(p);
            // Whole grains are interior or not, so the interior's runs
            // stay long enough for the loops' groups of lanes.
            for g in (range.start..range.end).step_by(Plan::GRAIN) {
                let g = g..(g + Plan::GRAIN).min(range.end);
                ts.clear();
                targets.push(g.clone(), &mut ts);
                if ts.iter().all(|&t| owner[t as usize] == p as u32) {
                    interior += g.len();
                    schedule.push_run(self.start + g.start..self.start + g.end);
                } else {
                    match boundary.last_mut() {
                        Some(r) if r.end == g.start => r.end = g.end,
                        _ => boundary.push(g),
                    }
                }
            }
            schedule.end_unit();
        }
        schedule.end_phase();
        drop(owner);

        // Blocks of up to block_size boundary positions, each a list of runs.
        let mut blocks: Vec<Vec<Range<usize>>> = Vec::new();
        let mut room = 0;
        for mut r in boundary {
            while !r.is_empty() {
                if room == 0 {
                    blocks.push(Vec::new());
                    room = self.block_size;
                }
                let take = r.start..r.end.min(r.start + room);
                room -= take.len();
                r.start = take.end;
                blocks.last_mut().expect("just pushed").push(take);
            }
        }
        let mut masks = vec![0u32; targets.space];
        let (colours, ncolours) = colour(&mut masks, &mut Vec::new(), blocks.len(), |b, out| {
            for r in &blocks[b] {
                targets.push(r.clone(), out);
            }
        });
        let (order, offsets) = by_colour(&colours, ncolours);
        for same in offsets.windows(2).map(|w| &order[w[0]..w[1]]) {
            for &b in same {
                for r in &blocks[b as usize] {
                    schedule.push_run(self.start + r.start..self.start + r.end);
                }
                schedule.end_unit();
            }
            schedule.end_phase();
        }
        tracing::debug!(
            positions = n,
            partitions = nparts,
            partition_blocks = size,
            interior,
            boundary_colours = ncolours,
            "partitions built"
        );
        schedule
    }

    /// Colours the blocks greedily, so that no two blocks of one colour
    /// write a common target.
    fn block_colouring(&self) -> &BlockColours {
        self.blocks.get_or_init(|| {
            let (start, n, bs) = (self.start, self.set_size, self.block_size);
            let nblocks = self.nblocks();
            let targets = Targets::new(start, n, self.subset.as_ref().map(Subset::indices), &self.conflicts);
            let mut masks = vec![0u32; targets.space];
            let (block_colours, ncolours) = colour(&mut masks, &mut Vec::new(), nblocks, |b, out| {
                targets.push(b * bs..((b + 1) * bs).min(n), out)
            });
            let (colour_blocks, colour_offsets) = by_colour(&block_colours, ncolours);
            tracing::debug!(
                positions = n,
                blocks = nblocks,
                colours = ncolours,
                "block colours built"
            );
            BlockColours {
                colour_blocks,
                colour_offsets,
                block_colours,
            }
        })
    }

    fn element_colouring(&self) -> &ElementColours {
        self.elements.get_or_init(|| {
            let targets = Targets::new(
                self.start,
                self.set_size,
                self.subset.as_ref().map(Subset::indices),
                &self.conflicts,
            );
            let mut masks = vec![0u32; targets.space];
            let mut touched = Vec::new();
            let mut colours = vec![0u32; self.set_size];
            let mut per_block = vec![0u32; self.nblocks()];
            for (b, count) in per_block.iter_mut().enumerate() {
                let r = self.block_range(b);
                let rel = r.start - self.start..r.end - self.start;
                let (c, n) = colour(&mut masks, &mut touched, r.len(), |i, out| {
                    targets.push(rel.start + i..rel.start + i + 1, out)
                });
                colours[rel].copy_from_slice(&c);
                *count = n;
            }
            ElementColours { colours, per_block }
        })
    }

    /// Number of positions (elements) the plan covers.
    pub fn set_size(&self) -> usize {
        self.set_size
    }

    /// The positions the plan covers: elements of the set, or indices into
    /// the subset's elements ([`Plan::subset`]).
    pub fn range(&self) -> Range<usize> {
        self.start..self.start + self.set_size
    }

    /// The subset whose positions the plan covers (`None`: a set's elements).
    pub fn subset(&self) -> Option<&Subset> {
        self.subset.as_ref()
    }

    /// Elements per block (the last block may be shorter).
    pub fn block_size(&self) -> usize {
        self.block_size
    }

    /// Number of blocks.
    pub fn nblocks(&self) -> usize {
        self.set_size.div_ceil(self.block_size)
    }

    /// Number of block colours.
    pub fn ncolours(&self) -> usize {
        self.block_colouring().colour_offsets.len() - 1
    }

    /// The blocks of colour `c`, in increasing order.
    pub fn blocks_of_colour(&self, c: usize) -> &[u32] {
        let b = self.block_colouring();
        &b.colour_blocks[b.colour_offsets[c]..b.colour_offsets[c + 1]]
    }

    /// The positions of block `b`.
    pub fn block_range(&self, b: usize) -> Range<usize> {
        self.start + b * self.block_size..self.start + ((b + 1) * self.block_size).min(self.set_size)
    }

    /// The colour of block `b`.
    pub fn block_colour(&self, b: usize) -> u32 {
        self.block_colouring().block_colours[b]
    }

    /// Each position's colour inside its block, indexed from the plan's first
    /// position (thread colouring for device backends; computed on first use).
    pub fn element_colours(&self) -> &[u32] {
        &self.element_colouring().colours
    }

    /// Number of element colours inside block `b` (computed on first use).
    pub fn block_element_colours(&self, b: usize) -> u32 {
        self.element_colouring().per_block[b]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Set;

    /// The targets of some positions of a plan (of their elements), per group.
    fn targets_of(plan: &Plan, conflicts: &[Conflict<'_>], positions: Range<usize>) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for p in positions {
            let e = plan.subset().map_or(p, |s| s.indices()[p] as usize);
            for c in conflicts {
                c.reach.for_each_target(e, |t| out.push((c.group, t as usize)));
            }
        }
        out
    }

    pub(super) fn check_plan(plan: &Plan, conflicts: &[Conflict<'_>]) {
        // Every element in exactly one block, blocks consecutive.
        let mut next = plan.range().start;
        for b in 0..plan.nblocks() {
            let r = plan.block_range(b);
            assert_eq!(r.start, next);
            assert!(!r.is_empty() && r.len() <= plan.block_size());
            next = r.end;
        }
        assert_eq!(next, plan.range().end);
        // Every block in exactly one colour list, matching its colour.
        let mut seen = vec![false; plan.nblocks()];
        for c in 0..plan.ncolours() {
            for &b in plan.blocks_of_colour(c) {
                assert!(!seen[b as usize]);
                seen[b as usize] = true;
                assert_eq!(plan.block_colour(b as usize), c as u32);
            }
        }
        assert!(seen.iter().all(|&s| s));
        // No two blocks of one colour share a target.
        for c in 0..plan.ncolours() {
            let mut owner = std::collections::HashMap::new();
            for &b in plan.blocks_of_colour(c) {
                let mut mine: Vec<_> = targets_of(plan, conflicts, plan.block_range(b as usize));
                mine.sort_unstable();
                mine.dedup();
                for t in mine {
                    if let Some(other) = owner.insert(t, b) {
                        panic!("blocks {other} and {b} of colour {c} share target {t:?}");
                    }
                }
            }
        }
        check_schedule(plan, plan.colour_schedule(), conflicts);
        check_schedule(plan, plan.partitions(), conflicts);
        // Inside a block, no two elements of one colour share a target.
        for b in 0..plan.nblocks() {
            let r = plan.block_range(b);
            let mut owner = std::collections::HashMap::new();
            for e in r.clone() {
                let col = plan.element_colours()[e - plan.range().start];
                assert!(col < plan.block_element_colours(b));
                let mut mine = targets_of(plan, conflicts, e..e + 1);
                mine.sort_unstable();
                mine.dedup();
                for t in mine {
                    if let Some(other) = owner.insert((col, t), e) {
                        panic!("elements {other} and {e} of block {b}, colour {col}, share target {t:?}");
                    }
                }
            }
        }
    }

    /// Every position of the plan runs once, and no two units of a phase
    /// write a common target.
    fn check_schedule(plan: &Plan, schedule: &Schedule, conflicts: &[Conflict<'_>]) {
        let mut runs = vec![0u8; plan.set_size()];
        for f in 0..schedule.nphases() {
            let mut owner = std::collections::HashMap::new();
            for u in schedule.phase(f) {
                let mut mine = Vec::new();
                for r in schedule.unit(u) {
                    assert!(plan.range().start <= r.start && r.end <= plan.range().end);
                    r.clone().for_each(|p| runs[p - plan.range().start] += 1);
                    mine.extend(targets_of(plan, conflicts, r));
                }
                mine.sort_unstable();
                mine.dedup();
                for t in mine {
                    if let Some(other) = owner.insert(t, u) {
                        panic!("units {other} and {u} of phase {f} share target {t:?}");
                    }
                }
            }
        }
        assert!(
            runs.iter().all(|&k| k == 1),
            "a position runs {:?} times",
            runs.iter().find(|&&k| k != 1)
        );
    }

    /// `n` edges on a line of nodes, edge `i` joining nodes `i` and
    /// `i + reach`: a node's writers lie `reach` apart.
    fn edge_chain(n: usize, reach: usize) -> Map {
        let nodes = Set::new("nodes", n + reach).unwrap();
        let edges = Set::new("edges", n).unwrap();
        let table: Vec<i32> = (0..n as i32).flat_map(|i| [i, i + reach as i32]).collect();
        Map::new("e2n", &edges, &nodes, 2, table).unwrap()
    }

    #[test]
    fn partitions_share_out_evenly_among_1_to_16_threads() {
        // Edges i -> (i, i + 1024): a node's writers lie 1024 apart, so
        // partitions of 16 spreads are 64 blocks of 256 long, and the range
        // holds 36 of them.
        let n = 36 * 64 * 256;
        let m = edge_chain(n, 1024);
        let conflicts = [Conflict {
            reach: Reach::Map(&m, MapIndex::All),
            group: 0,
        }];
        let plan = Plan::build(0..n, 256, &conflicts);
        let s = plan.partitions();
        let interiors: Vec<usize> = s.phase(0).map(|u| s.unit(u).map(|r| r.len()).sum()).collect();
        assert_eq!(
            interiors.len(),
            48,
            "36 partitions' worth, rounded up to a multiple of 16"
        );
        let total: usize = interiors.iter().sum();
        for threads in [1, 2, 4, 8, 16] {
            // Each thread's contiguous share of the units, as the host
            // backends hand them out.
            let share = interiors.len().div_ceil(threads);
            let most = interiors.chunks(share).map(|c| c.iter().sum::<usize>()).max().unwrap();
            let even = total as f64 / threads as f64;
            assert!(
                most as f64 <= 1.05 * even,
                "{threads} threads: the busiest takes {most} interior positions, an even share is {even}"
            );
        }
        check_plan(&plan, &conflicts);
    }

    #[test]
    fn partitions_run_a_banded_mesh_mostly_in_their_interiors() {
        // The chain of edges i -> (i, i+1): a target's writers are 1 apart,
        // so partitions are a block long, and only the grains where two
        // partitions meet are boundary.
        let n = 40 * 256;
        let m = edge_chain(n, 1);
        let (nodes, edges) = (m.to_set().clone(), m.from_set().clone());
        let conflicts = [Conflict {
            reach: Reach::Map(&m, MapIndex::All),
            group: 0,
        }];
        let plan = Plan::build(0..n, 256, &conflicts);
        let s = plan.partitions();
        assert_eq!(s.phase(0).len(), 40, "one interior per block-long partition");
        let mut interior = 0;
        for u in s.phase(0) {
            let mut runs = s.unit(u);
            let r = runs.next().unwrap();
            assert!(runs.next().is_none(), "an interior is one stretch of positions");
            assert_eq!(r.start / 256, u, "interior {u} lies in partition {u}");
            interior += r.len();
        }
        // Each partition but the outer ones loses a grain at either end.
        assert_eq!(interior, n - 2 * 39 * Plan::GRAIN);
        // The boundary grains pair up across partition edges, one colour.
        assert_eq!(s.nphases(), 2);
        check_plan(&plan, &conflicts);
        // Numbered without locality (writers of a node far apart), the
        // range still makes MIN_PARTITIONS partitions, mostly boundary.
        let scattered: Vec<i32> = (0..n as i32).flat_map(|i| [i, (i * 7919 + 13) % n as i32]).collect();
        let m = Map::new("scattered", &edges, &nodes, 2, scattered).unwrap();
        let conflicts = [Conflict {
            reach: Reach::Map(&m, MapIndex::All),
            group: 0,
        }];
        let plan = Plan::build(0..n, 256, &conflicts);
        assert!(plan.partitions().nphases() > 1, "a scattered mesh has a boundary");
        check_plan(&plan, &conflicts);
        // Positions of a subset (nine edges in ten), from position 300 on.
        let m = Map::new(
            "e2n",
            &edges,
            &nodes,
            2,
            (0..n as i32).flat_map(|i| [i, i + 1]).collect(),
        )
        .unwrap();
        let conflicts = [Conflict {
            reach: Reach::Map(&m, MapIndex::All),
            group: 0,
        }];
        let most = Subset::filter("most", &edges, |e| e % 10 != 0).unwrap();
        let plan = Plan::build_over(300..most.indices().len(), Some(&most), 256, &conflicts);
        let s = plan.partitions();
        let interior: usize = s.phase(0).flat_map(|u| s.unit(u)).map(|r| r.len()).sum();
        assert!(interior > plan.set_size() / 2, "{interior} of {}", plan.set_size());
        assert!(s.phase(0).flat_map(|u| s.unit(u)).all(|r| r.start >= 300));
        check_plan(&plan, &conflicts);
    }

    #[test]
    fn chain_of_edges_needs_two_colours_per_block_pair() {
        // Edges i -> (i, i+1) on a line: neighbouring blocks share a node.
        let nodes = Set::new("nodes", 101).unwrap();
        let edges = Set::new("edges", 100).unwrap();
        let table: Vec<i32> = (0..100).flat_map(|i| [i, i + 1]).collect();
        let m = Map::new("e2n", &edges, &nodes, 2, table).unwrap();
        let conflicts = [
            Conflict {
                reach: Reach::Map(&m, MapIndex::Entry(0)),
                group: 0,
            },
            Conflict {
                reach: Reach::Map(&m, MapIndex::Entry(1)),
                group: 0,
            },
        ];
        let plan = Plan::build(0..100, 8, &conflicts);
        assert_eq!(plan.nblocks(), 13);
        assert_eq!(plan.ncolours(), 2);
        assert_eq!(plan.blocks_of_colour(0), &[0, 2, 4, 6, 8, 10, 12]);
        // Inside a block, consecutive edges share a node: two element colours.
        assert_eq!(plan.block_element_colours(0), 2);
        check_plan(&plan, &conflicts);
    }

    #[test]
    fn subset_plans_colour_the_elements_at_their_positions() {
        // The chain of edges i -> (i, i+1): every other edge shares no node
        // with the next one of the subset, so one colour does, in blocks and
        // inside them; the same positions of the whole set need two.
        let nodes = Set::new("nodes", 101).unwrap();
        let edges = Set::new("edges", 100).unwrap();
        let table: Vec<i32> = (0..100).flat_map(|i| [i, i + 1]).collect();
        let m = Map::new("e2n", &edges, &nodes, 2, table).unwrap();
        let conflicts = [Conflict {
            reach: Reach::Map(&m, MapIndex::All),
            group: 0,
        }];
        let even = Subset::filter("even", &edges, |e| e % 2 == 0).unwrap();
        let plan = Plan::build_over(0..50, Some(&even), 8, &conflicts);
        assert_eq!((plan.nblocks(), plan.ncolours()), (7, 1));
        assert_eq!(plan.block_element_colours(0), 1);
        assert!(plan.subset().unwrap().same(&even));
        check_plan(&plan, &conflicts);
        assert_eq!(Plan::build(0..50, 8, &conflicts).ncolours(), 2);
        // Pairs of neighbouring edges far apart: elements of a block share a
        // node, blocks do not.
        let pairs = Subset::new("pairs", &edges, (0..10).flat_map(|k| [10 * k, 10 * k + 1]).collect()).unwrap();
        let plan = Plan::build_over(0..20, Some(&pairs), 2, &conflicts);
        assert_eq!((plan.nblocks(), plan.ncolours()), (10, 1));
        assert_eq!(plan.block_element_colours(3), 2);
        check_plan(&plan, &conflicts);
        // A range of positions inside the subset (a region of it).
        let plan = Plan::build_over(5..17, Some(&pairs), 3, &conflicts);
        assert_eq!(plan.range(), 5..17);
        check_plan(&plan, &conflicts);
    }

    #[test]
    fn independent_targets_need_one_colour() {
        let cells = Set::new("cells", 10).unwrap();
        let edges = Set::new("edges", 10).unwrap();
        let m = Map::new("e2c", &edges, &cells, 1, (0..10).collect()).unwrap();
        let conflicts = [Conflict {
            reach: Reach::Map(&m, MapIndex::Entry(0)),
            group: 0,
        }];
        let plan = Plan::build(0..10, 3, &conflicts);
        assert_eq!(plan.ncolours(), 1);
        assert_eq!(plan.nblocks(), 4);
        assert_eq!(plan.block_range(3), 9..10);
        check_plan(&plan, &conflicts);
    }

    #[test]
    fn targets_past_32_bits_are_told_apart() {
        // Targets 1 and 1 + 2^32 of a set of 5 billion: apart, though equal
        // in 32 bits; the third element shares the second's.
        let huge = Set::new_long("huge", 5_000_000_000).unwrap();
        let edges = Set::new("edges", 3).unwrap();
        let far = 1 + (1i64 << 32);
        let m = crate::LongMap::new("e2h", &edges, &huge, 1, vec![1, far, far]).unwrap();
        let conflicts = [Conflict {
            reach: Reach::Map(m.as_map(), MapIndex::Entry(0)),
            group: 0,
        }];
        let plan = Plan::build(0..3, 1, &conflicts);
        assert_eq!(plan.block_colour(0), plan.block_colour(1));
        assert_ne!(plan.block_colour(1), plan.block_colour(2));
        check_plan(&plan, &conflicts);
        let plan = Plan::build(0..3, 4, &conflicts);
        assert_eq!(plan.block_element_colours(0), 2);
        check_plan(&plan, &conflicts);
    }

    #[test]
    fn few_elements_into_a_big_set_are_numbered_densely() {
        // 50 edges into 3 million nodes: masks for what they reach, not for
        // every node; the plan is as valid as ever.
        let nodes = Set::new("nodes", 3_000_000).unwrap();
        let edges = Set::new("edges", 50).unwrap();
        let table: Vec<i32> = (0..100).map(|i| ((i * 7919) % 37) * 81_001).collect();
        let m = Map::new("e2n", &edges, &nodes, 2, table).unwrap();
        let conflicts = [Conflict {
            reach: Reach::Map(&m, MapIndex::All),
            group: 0,
        }];
        let plan = Plan::build(0..50, 3, &conflicts);
        let stored: Vec<(OwnedReach, usize)> = conflicts.iter().map(|c| (OwnedReach::of(&c.reach), c.group)).collect();
        let targets = Targets::new(0, 50, None, &stored);
        assert_eq!(targets.space, 37, "one mask per distinct target");
        assert!(plan.ncolours() > 1);
        check_plan(&plan, &conflicts);
    }

    #[test]
    fn blocks_grow_rather_than_outnumber_32_bit_block_numbers() {
        // Nothing is computed until a schedule is asked for: no memory.
        let n = u32::MAX as usize + 2;
        let plan = Plan::build(0..n, 1, &[]);
        assert!(plan.nblocks() <= u32::MAX as usize, "{} blocks", plan.nblocks());
        assert_eq!(plan.block_size(), 2);
        assert_eq!(Plan::build(0..1000, 1, &[]).nblocks(), 1000);
    }

    #[test]
    fn few_elements_of_a_ragged_map_into_a_big_set_are_numbered_densely() {
        // 5000 cells reaching 3 targets each of 3 million nodes: 15 000
        // targets in all, however many cells a block holds.
        let nodes = Set::new("nodes", 3_000_000).unwrap();
        let cells = Set::new("cells", 5000).unwrap();
        let offsets: Vec<usize> = (0..=5000).map(|c| 3 * c).collect();
        let targets: Vec<i32> = (0..15_000).map(|k| (k * 199) % 2_999_993).collect();
        let r = RaggedMap::new("r", &cells, &nodes, offsets, targets).unwrap();
        let conflicts = [Conflict {
            reach: Reach::Ragged(&r),
            group: 0,
        }];
        let stored: Vec<(OwnedReach, usize)> = conflicts.iter().map(|c| (OwnedReach::of(&c.reach), c.group)).collect();
        let targets = Targets::new(0, 5000, None, &stored);
        assert_eq!(targets.space, 15_000, "one mask per distinct target, not one per node");
        check_plan(&Plan::build(0..5000, 64, &conflicts), &conflicts);
    }

    #[test]
    fn more_than_32_colours_take_extra_rounds() {
        // Every element of 40 targets one shared node: all 40 one-element
        // blocks conflict pairwise, so 40 colours are needed.
        let nodes = Set::new("nodes", 2).unwrap();
        let edges = Set::new("edges", 40).unwrap();
        let m = Map::new("e2n", &edges, &nodes, 1, vec![0; 40]).unwrap();
        let conflicts = [Conflict {
            reach: Reach::Map(&m, MapIndex::All),
            group: 0,
        }];
        let plan = Plan::build(0..40, 1, &conflicts);
        assert_eq!(plan.ncolours(), 40);
        check_plan(&plan, &conflicts);
        // And inside one block of 40, 40 element colours.
        let plan = Plan::build(0..40, 64, &conflicts);
        assert_eq!(plan.ncolours(), 1);
        assert_eq!(plan.block_element_colours(0), 40);
        check_plan(&plan, &conflicts);
    }

    #[test]
    fn different_dats_do_not_conflict_with_each_other() {
        // Element 0 writes A[0] and B[1]; element 1 writes A[1] and B[0].
        let nodes = Set::new("nodes", 2).unwrap();
        let edges = Set::new("edges", 2).unwrap();
        let m1 = Map::new("m1", &edges, &nodes, 1, vec![0, 1]).unwrap();
        let m2 = Map::new("m2", &edges, &nodes, 1, vec![1, 0]).unwrap();
        let separate = [
            Conflict {
                reach: Reach::Map(&m1, MapIndex::Entry(0)),
                group: 0,
            },
            Conflict {
                reach: Reach::Map(&m2, MapIndex::Entry(0)),
                group: 1,
            },
        ];
        assert_eq!(Plan::build(0..2, 1, &separate).ncolours(), 1);
        // The same two maps into one Dat do conflict.
        let same = [
            Conflict {
                reach: Reach::Map(&m1, MapIndex::Entry(0)),
                group: 0,
            },
            Conflict {
                reach: Reach::Map(&m2, MapIndex::Entry(0)),
                group: 0,
            },
        ];
        let plan = Plan::build(0..2, 1, &same);
        assert_eq!(plan.ncolours(), 2);
        check_plan(&plan, &same);
        assert_eq!(Plan::build(0..2, 1, &[]).ncolours(), 1);
    }

    #[test]
    fn the_checker_rejects_a_plan_with_a_conflict() {
        let nodes = Set::new("nodes", 11).unwrap();
        let edges = Set::new("edges", 10).unwrap();
        let m = Map::new("e2n", &edges, &nodes, 2, (0..10).flat_map(|i| [i, i + 1]).collect()).unwrap();
        let conflicts = [Conflict {
            reach: Reach::Map(&m, MapIndex::All),
            group: 0,
        }];
        let good = Plan::build(0..10, 2, &conflicts);
        check_plan(&good, &conflicts);
        // Claim that all blocks can run together: neighbours share a node.
        let mut bad = good.clone();
        let _ = bad.ncolours();
        let blocks = bad.blocks.get_mut().unwrap();
        blocks.colour_blocks = (0..5).collect();
        blocks.colour_offsets = vec![0, 5];
        blocks.block_colours = vec![0; 5];
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check_plan(&bad, &conflicts)));
        assert!(caught.is_err(), "a conflicting colour must be detected");
        // Same for element colours inside a block.
        let mut bad = good.clone();
        let _ = bad.element_colours();
        bad.elements.get_mut().unwrap().colours = vec![0; 10];
        assert!(std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check_plan(&bad, &conflicts))).is_err());
        // Same for partitions that write a common node in one phase, or
        // leave a position out.
        for wrong in [Schedule::chunks(0..10, 2), Schedule::chunks(0..9, 9)] {
            let mut bad = good.clone();
            let _ = bad.partitions();
            *bad.partitions.get_mut().unwrap() = wrong;
            assert!(std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check_plan(&bad, &conflicts))).is_err());
        }
    }

    #[test]
    fn empty_set_has_no_blocks() {
        let plan = Plan::build(0..0, 16, &[]);
        assert_eq!(plan.nblocks(), 0);
        assert_eq!(plan.ncolours(), 0);
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// A random loop: an iteration set, up to three maps of arity 1 to 4
        /// into random target sets, and which entries of which map conflict in
        /// which group.
        /// (iteration set size, block size, maps as (arity, table, target set
        /// size), conflicts as (map, entry or all, group)).
        type RandomLoop = (
            usize,
            usize,
            Vec<(usize, Vec<i32>, usize)>,
            Vec<(usize, Option<usize>, usize)>,
        );

        fn random_loop() -> impl Strategy<Value = RandomLoop> {
            (0usize..300, 1usize..70).prop_flat_map(|(n, block)| {
                let maps = prop::collection::vec(
                    (1usize..5, 1usize..60).prop_flat_map(move |(arity, targets)| {
                        (
                            Just(arity),
                            prop::collection::vec(0..targets as i32, n * arity),
                            Just(targets),
                        )
                    }),
                    1..4,
                );
                maps.prop_flat_map(move |maps| {
                    let nmaps = maps.len();
                    let uses = prop::collection::vec((0..nmaps, prop::option::of(0usize..4), 0usize..2), 1..5);
                    (Just(n), Just(block), Just(maps), uses)
                })
            })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(200))]
            #[test]
            fn ragged_plans_are_valid(
                (n, block, targets, rows) in (1usize..200, 1usize..40, 1usize..90).prop_flat_map(|(n, block, targets)| {
                    let rows = prop::collection::vec(prop::collection::vec(0..targets as i32, 0..51), n);
                    (Just(n), Just(block), Just(targets), rows)
                }),
                with_entries in any::<bool>(),
            ) {
                // Degrees 0 to 50, repeats allowed, alone or beside a map's entries into the same Dat.
                let from = Set::new("from", n).unwrap();
                let to = Set::new("to", targets).unwrap();
                let mut offsets = vec![0];
                for r in &rows {
                    offsets.push(offsets.last().unwrap() + r.len());
                }
                let r = RaggedMap::new("r", &from, &to, offsets, rows.concat()).unwrap();
                let m = Map::new("m", &from, &to, 1, (0..n as i32).map(|e| e % targets as i32).collect()).unwrap();
                let mut conflicts = vec![Conflict { reach: Reach::Ragged(&r), group: 0 }];
                if with_entries {
                    conflicts.push(Conflict { reach: Reach::Map(&m, MapIndex::Entry(0)), group: 0 });
                }
                let plan = Plan::build(0..n, block, &conflicts);
                check_plan(&plan, &conflicts);
            }

            #[test]
            fn subset_plans_are_valid((n, block, maps, uses) in random_loop(), keep in any::<u64>()) {
                // The same random loops over a random subset of the iteration set.
                let from = Set::new("from", n).unwrap();
                let built: Vec<Map> = maps
                    .iter()
                    .map(|(arity, table, targets)| {
                        Map::new("m", &from, &Set::new("to", *targets).unwrap(), *arity, table.clone()).unwrap()
                    })
                    .collect();
                let conflicts: Vec<Conflict<'_>> = uses
                    .iter()
                    .map(|&(m, entry, group)| {
                        let map = &built[m];
                        let index = entry.map_or(MapIndex::All, |i| MapIndex::Entry(i % map.arity()));
                        Conflict { reach: Reach::Map(map, index), group }
                    })
                    .collect();
                let subset = Subset::filter("some", &from, |e| (keep >> (e % 64)) & 1 == 1).unwrap();
                let plan = Plan::build_over(0..subset.len(), Some(&subset), block, &conflicts);
                check_plan(&plan, &conflicts);
            }

            #[test]
            fn plans_are_valid((n, block, maps, uses) in random_loop()) {
                let from = Set::new("from", n).unwrap();
                let built: Vec<Map> = maps
                    .iter()
                    .map(|(arity, table, targets)| {
                        Map::new("m", &from, &Set::new("to", *targets).unwrap(), *arity, table.clone()).unwrap()
                    })
                    .collect();
                let conflicts: Vec<Conflict<'_>> = uses
                    .iter()
                    .map(|&(m, entry, group)| {
                        let map = &built[m];
                        let index = match entry {
                            Some(i) => MapIndex::Entry(i % map.arity()),
                            None => MapIndex::All,
                        };
                        Conflict { reach: Reach::Map(map, index), group }
                    })
                    .collect();
                let plan = Plan::build(0..n, block, &conflicts);
                check_plan(&plan, &conflicts);
            }
        }
    }
}
