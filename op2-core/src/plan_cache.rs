use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::{conflicts, ArgSpec, MapIndex, Plan, Set, Subset};

/// What a plan depends on: the iteration set and subset, the block size, and
/// each conflicting argument's map, entries and target group. Sets, subsets
/// and maps are immutable and their ids never reused, so equal keys mean
/// equal plans.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct PlanKey {
    set: u64,
    subset: Option<u64>,
    range: (usize, usize),
    block_size: usize,
    conflicts: Vec<((u64, Option<MapIndex>), usize)>,
}

/// Plans computed so far, shared by all loops of a runtime.
#[derive(Debug, Default)]
pub struct PlanCache {
    plans: Mutex<HashMap<PlanKey, Arc<Plan>>>,
    built: AtomicUsize,
}

impl PlanCache {
    /// The plan for a loop over positions `range` of `set` (its elements) or
    /// of `subset` (its indices) with these arguments, built on first use;
    /// `None` when no argument conflicts (the loop needs no colouring).
    pub fn plan(
        &self,
        set: &Set,
        subset: Option<&Subset>,
        range: Range<usize>,
        args: &[ArgSpec<'_>],
        block_size: usize,
    ) -> Option<Arc<Plan>> {
        let conflicts = conflicts(args);
        if conflicts.is_empty() {
            return None;
        }
        let key = PlanKey {
            set: set.id(),
            subset: subset.map(Subset::id),
            range: (range.start, range.end),
            block_size,
            conflicts: conflicts.iter().map(|c| (c.reach.key(), c.group)).collect(),
        };
        let mut plans = self.plans.lock().unwrap_or_else(|p| p.into_inner());
        if !plans.contains_key(&key) {
            // Subsets rebuilt every step (agent states) would otherwise leave
            // one plan per step behind: drop those whose subset only cached
            // plans still hold, so no loop can ask for them again.
            let mut held_by_plans: HashMap<u64, usize> = HashMap::new();
            for s in plans.values().filter_map(|p| p.subset()) {
                *held_by_plans.entry(s.id()).or_default() += 1;
            }
            plans.retain(|_, p| p.subset().is_none_or(|s| s.handles() > held_by_plans[&s.id()]));
        }
        let plan = plans.entry(key).or_insert_with(|| {
            self.built.fetch_add(1, Ordering::Relaxed);
            let start = std::time::Instant::now();
            let plan = Plan::build_over(range.clone(), subset, block_size, &conflicts);
            tracing::debug!(
                set = set.name(),
                subset = subset.map(Subset::name),
                elements = range.len(),
                block_size,
                blocks = plan.nblocks(),
                colours = plan.ncolours(),
                seconds = start.elapsed().as_secs_f64(),
                "plan built"
            );
            Arc::new(plan)
        });
        Some(plan.clone())
    }

    /// How many plans the cache holds.
    pub fn len(&self) -> usize {
        self.plans.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether the cache holds no plan.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many plans have been built (not found in the cache).
    pub fn built(&self) -> usize {
        self.built.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Access, ArgData, Dat, Map};

    #[test]
    fn identical_loops_share_one_plan() {
        let nodes = Set::new("nodes", 10).unwrap();
        let edges = Set::new("edges", 9).unwrap();
        let m = Map::new("e2n", &edges, &nodes, 2, (0..9).flat_map(|i| [i, i + 1]).collect()).unwrap();
        let acc = Dat::<f64>::zeros("acc", &nodes, 1).unwrap();
        let w = Dat::<f64>::zeros("w", &edges, 1).unwrap();
        let arg = |access, index| ArgSpec::through_map(ArgData::Dat(&acc), access, &m, index);
        let direct = ArgSpec::direct(ArgData::Dat(&w), Access::Read);
        let inc = [
            direct,
            arg(Access::Inc, MapIndex::Entry(0)),
            arg(Access::Inc, MapIndex::Entry(1)),
        ];
        let cache = PlanCache::default();
        let p1 = cache.plan(&edges, None, 0..9, &inc, 4).unwrap();
        let p2 = cache.plan(&edges, None, 0..9, &inc, 4).unwrap();
        assert!(Arc::ptr_eq(&p1, &p2));
        assert_eq!(cache.built(), 1);
        // Another block size is another plan.
        cache.plan(&edges, None, 0..9, &inc, 2).unwrap();
        assert_eq!(cache.built(), 2);
        // Reading through the map needs no plan.
        let read = [direct, arg(Access::Read, MapIndex::Entry(0))];
        assert!(cache.plan(&edges, None, 0..9, &read, 4).is_none());
        assert_eq!(cache.built(), 2);
        // A subset is another plan, each subset its own, positions counted in it.
        let some = Subset::new("some", &edges, vec![1, 2, 5]).unwrap();
        let p3 = cache.plan(&edges, Some(&some), 0..3, &inc, 4).unwrap();
        assert_eq!((p3.range(), cache.built()), (0..3, 3));
        assert!(Arc::ptr_eq(
            &p3,
            &cache.plan(&edges, Some(&some), 0..3, &inc, 4).unwrap()
        ));
        let same_elements = Subset::new("some", &edges, vec![1, 2, 5]).unwrap();
        cache.plan(&edges, Some(&same_elements), 0..3, &inc, 4).unwrap();
        assert_eq!(cache.built(), 4);
    }

    #[test]
    fn plans_of_dropped_subsets_are_dropped() {
        let nodes = Set::new("nodes", 50).unwrap();
        let edges = Set::new("edges", 49).unwrap();
        let m = Map::new("e2n", &edges, &nodes, 2, (0..49).flat_map(|i| [i, i + 1]).collect()).unwrap();
        let acc = Dat::<f64>::zeros("acc", &nodes, 1).unwrap();
        let args = [
            ArgSpec::through_map(ArgData::Dat(&acc), Access::Inc, &m, MapIndex::Entry(0)),
            ArgSpec::through_map(ArgData::Dat(&acc), Access::Inc, &m, MapIndex::Entry(1)),
        ];
        let cache = PlanCache::default();
        let whole = cache.plan(&edges, None, 0..49, &args, 4).unwrap();
        let kept = Subset::new("kept", &edges, vec![1, 2, 3]).unwrap();
        cache.plan(&edges, Some(&kept), 0..3, &args, 4).unwrap();
        cache.plan(&edges, Some(&kept), 0..3, &args, 2).unwrap();
        // A new subset every step, as agent states are: the cache stays small.
        for step in 0..200 {
            let active = Subset::filter("active", &edges, |e| (e + step) % 3 == 0).unwrap();
            let n = active.len();
            cache.plan(&edges, Some(&active), 0..n, &args, 4).unwrap();
            assert!(cache.len() <= 4, "step {step}: {} plans cached", cache.len());
        }
        assert_eq!(cache.built(), 203);
        // Plans of the set and of a subset still held are kept.
        assert!(Arc::ptr_eq(&whole, &cache.plan(&edges, None, 0..49, &args, 4).unwrap()));
        cache.plan(&edges, Some(&kept), 0..3, &args, 2).unwrap();
        assert_eq!(cache.built(), 203, "nothing rebuilt");
    }
}
