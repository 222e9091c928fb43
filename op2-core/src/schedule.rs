//! `Schedule`: how a host backend runs a loop's positions on threads. A
//! schedule is a sequence of phases; the units of one phase may run at the
//! same time on different threads, and each unit runs its runs (ranges of
//! consecutive positions) in order on one thread, with its own reduction
//! partials. A schedule never depends on the thread count, so neither do
//! the order of the increments nor the order in which partials are added.
//!
//! [`HostSchedule`] says which a host backend takes for planned loops.
//! Three schedules exist: chunks of a loop that needs no colouring
//! ([`Schedule::chunks`]), the colours of a plan's blocks
//! ([`Schedule::colours`]) and a plan's partitions
//! ([`Plan::partitions`](crate::Plan::partitions)): the interiors of
//! contiguous partitions in parallel, then their boundaries by colour.
use std::ops::Range;

/// Which schedule host backends (`rayon`, `jit`) run planned loops with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum HostSchedule {
    /// [`Plan::partitions`](crate::Plan::partitions): contiguous
    /// partitions' interiors in parallel, then their boundaries by colour;
    /// each thread streams through its own stretch of the mesh.
    #[default]
    Partitions,
    /// [`Plan::colour_schedule`](crate::Plan::colour_schedule): the plan's
    /// block colours one after the other, each sweeping the whole range.
    Colours,
}

impl HostSchedule {
    /// The name `OP2_HOST_SCHEDULE` takes.
    pub fn name(self) -> &'static str {
        match self {
            HostSchedule::Partitions => "partitions",
            HostSchedule::Colours => "colours",
        }
    }

    /// This schedule of `plan` (built on first use, then kept by the plan).
    pub fn of(self, plan: &crate::Plan) -> &Schedule {
        match self {
            HostSchedule::Partitions => plan.partitions(),
            HostSchedule::Colours => plan.colour_schedule(),
        }
    }
}

impl std::fmt::Display for HostSchedule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The schedule a host backend runs one loop with
/// ([`ParLoop::schedule`](crate::ParLoop::schedule)): one of its cached
/// plan's, which it keeps alive, or chunks of its own.
#[derive(Debug)]
pub enum LoopSchedule {
    /// The plan's schedule of this kind.
    Planned(std::sync::Arc<crate::Plan>, HostSchedule),
    /// Chunks of a loop that needs no plan.
    Chunks(Schedule),
}

impl std::ops::Deref for LoopSchedule {
    type Target = Schedule;

    fn deref(&self) -> &Schedule {
        match self {
            LoopSchedule::Planned(plan, kind) => kind.of(plan),
            LoopSchedule::Chunks(s) => s,
        }
    }
}

/// Phases of units of runs (see the module's header), stored flat so a
/// generated C loop can take them as arrays.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// Each run's first and one-past-last position.
    runs: Vec<[usize; 2]>,
    /// Unit `u` runs `runs[unit_runs[u]..unit_runs[u + 1]]`.
    unit_runs: Vec<usize>,
    /// Phase `f` is the units `phase_units[f]..phase_units[f + 1]`.
    phase_units: Vec<usize>,
}

impl Default for Schedule {
    fn default() -> Self {
        Schedule::new()
    }
}

impl Schedule {
    /// An empty schedule, to be filled with [`Schedule::push_run`],
    /// [`Schedule::end_unit`] and [`Schedule::end_phase`].
    pub fn new() -> Schedule {
        Schedule {
            runs: Vec::new(),
            unit_runs: vec![0],
            phase_units: vec![0],
        }
    }

    /// One phase of units of `size` consecutive positions of `range` (the
    /// last may be shorter): a loop whose elements may run in any order.
    ///
    /// # Panics
    /// If `size` is 0.
    pub fn chunks(range: Range<usize>, size: usize) -> Schedule {
        assert!(size > 0, "chunk size must be at least 1");
        let mut s = Schedule::new();
        let mut at = range.start;
        while at < range.end {
            let end = range.end.min(at.saturating_add(size));
            s.push_run(at..end);
            s.end_unit();
            at = end;
        }
        s.end_phase();
        s
    }

    /// One phase per colour of `plan`'s blocks, each block a unit.
    pub fn colours(plan: &crate::Plan) -> Schedule {
        let mut s = Schedule::new();
        for c in 0..plan.ncolours() {
            for &b in plan.blocks_of_colour(c) {
                s.push_run(plan.block_range(b as usize));
                s.end_unit();
            }
            s.end_phase();
        }
        s
    }

    /// Adds `run` to the unit being built, joined to its last run when they
    /// touch. Empty runs are left out.
    pub fn push_run(&mut self, run: Range<usize>) {
        if run.is_empty() {
            return;
        }
        let unit_has_runs = self.runs.len() > *self.unit_runs.last().expect("never empty");
        match self.runs.last_mut() {
            Some(last) if unit_has_runs && last[1] == run.start => last[1] = run.end,
            _ => self.runs.push([run.start, run.end]),
        }
    }

    /// Ends the unit being built; a unit with no runs is left out.
    pub fn end_unit(&mut self) {
        let n = self.runs.len();
        if *self.unit_runs.last().expect("never empty") != n {
            self.unit_runs.push(n);
        }
    }

    /// Ends the phase being built; a phase with no units is left out.
    pub fn end_phase(&mut self) {
        self.end_unit();
        let n = self.nunits();
        if *self.phase_units.last().expect("never empty") != n {
            self.phase_units.push(n);
        }
    }

    /// Number of phases.
    pub fn nphases(&self) -> usize {
        self.phase_units.len() - 1
    }

    /// Number of units, over all phases.
    pub fn nunits(&self) -> usize {
        self.unit_runs.len() - 1
    }

    /// The units of phase `f`.
    pub fn phase(&self, f: usize) -> Range<usize> {
        self.phase_units[f]..self.phase_units[f + 1]
    }

    /// The runs of unit `u`, in the order it runs them.
    pub fn unit(&self, u: usize) -> impl Iterator<Item = Range<usize>> + '_ {
        self.runs[self.unit_runs[u]..self.unit_runs[u + 1]]
            .iter()
            .map(|r| r[0]..r[1])
    }

    /// All runs, flat: what [`Schedule::unit_offsets`] indexes.
    pub fn runs(&self) -> &[[usize; 2]] {
        &self.runs
    }

    /// Unit `u`'s runs are `runs()[unit_offsets()[u]..unit_offsets()[u + 1]]`
    /// (`nunits() + 1` entries).
    pub fn unit_offsets(&self) -> &[usize] {
        &self.unit_runs
    }

    /// Number of positions the schedule runs.
    pub fn positions(&self) -> usize {
        self.runs.iter().map(|r| r[1] - r[0]).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_range_in_order() {
        let s = Schedule::chunks(3..13, 4);
        assert_eq!(s.nphases(), 1);
        assert_eq!(s.phase(0), 0..3);
        let runs: Vec<_> = (0..3).flat_map(|u| s.unit(u)).collect();
        assert_eq!(runs, vec![3..7, 7..11, 11..13]);
        assert_eq!(s.positions(), 10);
        assert_eq!(Schedule::chunks(5..5, 4).nphases(), 0);
    }

    #[test]
    fn touching_runs_join_and_empty_units_and_phases_go() {
        let mut s = Schedule::new();
        s.push_run(0..2);
        s.push_run(2..5);
        s.push_run(7..9);
        s.end_unit();
        s.push_run(9..10); // touches the last run, but starts a new unit
        s.end_unit();
        s.end_unit();
        s.end_phase();
        s.end_phase();
        s.push_run(4..4);
        s.end_phase();
        assert_eq!(s.nphases(), 1);
        assert_eq!(s.nunits(), 2);
        assert_eq!(s.unit(0).collect::<Vec<_>>(), vec![0..5, 7..9]);
        assert_eq!(s.unit(1).collect::<Vec<_>>(), vec![9..10]);
        assert_eq!(s.unit_offsets(), &[0, 2, 3]);
    }
}
