//! The colouring plans of a runtime, cached by what they depend on, and
//! dropped when nothing can ask for them again.
//!
//! Why eviction matters: an agent model rebuilds its ragged maps after
//! every round of births and deaths, and each new map is a new key. Plans
//! of dropped maps (and of dropped subsets) go at the next miss, and the
//! cache never holds more than [`PlanCache::MAX_PLANS`]: past that the
//! least recently used plan goes (a loop that asks for it again rebuilds
//! it, with the same result).

use std::any::Any;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

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

/// Whether a map (fixed or ragged) still exists, without keeping it alive.
pub(crate) struct Watch(Weak<dyn Any + Send + Sync>);

impl Watch {
    /// A watch on the shared part of a handle.
    pub(crate) fn of<T: Any + Send + Sync>(inner: &Arc<T>) -> Watch {
        let weak: Weak<dyn Any + Send + Sync> = Arc::downgrade(inner) as Weak<dyn Any + Send + Sync>;
        Watch(weak)
    }

    /// Which map (its shared part's address, unique while it lives).
    fn key(&self) -> usize {
        self.0.as_ptr() as *const () as usize
    }

    /// The map's handles, the plans' own included.
    fn handles(&self) -> usize {
        self.0.strong_count()
    }
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Watch(handles: {})", self.handles())
    }
}

/// A cached plan, the maps it was built through, and when it was last used.
#[derive(Debug)]
struct Entry {
    plan: Arc<Plan>,
    maps: Vec<Watch>,
    used: u64,
}

#[derive(Debug, Default)]
struct Plans {
    entries: HashMap<PlanKey, Entry>,
    /// Lookups so far: the clock of `Entry::used`.
    clock: u64,
}

impl Plans {
    /// Drops the plans no loop can ask for again: those through a map, or
    /// over a subset, that only cached plans still hold (a plan keeps its
    /// maps, one handle per conflicting argument, for the colourings and
    /// partitions it computes on first use, and its subset).
    fn drop_unreachable(&mut self) {
        let mut subsets_held: HashMap<u64, usize> = HashMap::new();
        let mut maps_held: HashMap<usize, usize> = HashMap::new();
        for e in self.entries.values() {
            if let Some(s) = e.plan.subset() {
                *subsets_held.entry(s.id()).or_default() += 1;
            }
            for w in &e.maps {
                *maps_held.entry(w.key()).or_default() += 1;
            }
        }
        // Judged before any plan goes: a plan dropped gives back its handles.
        let unreachable: Vec<PlanKey> = self
            .entries
            .iter()
            .filter(|(_, e)| {
                e.maps.iter().any(|w| w.handles() <= maps_held[&w.key()])
                    || e.plan.subset().is_some_and(|s| s.handles() <= subsets_held[&s.id()])
            })
            .map(|(k, _)| k.clone())
            .collect();
        for k in &unreachable {
            self.entries.remove(k);
        }
    }

    /// Drops least recently used plans until there is room for one more.
    fn make_room(&mut self) {
        while self.entries.len() >= PlanCache::MAX_PLANS {
            let Some(oldest) = self.entries.iter().min_by_key(|(_, e)| e.used).map(|(k, _)| k.clone()) else {
                return;
            };
            self.entries.remove(&oldest);
        }
    }
}

/// Plans computed so far, shared by all loops of a runtime.
#[derive(Debug, Default)]
pub struct PlanCache {
    plans: Mutex<Plans>,
    built: AtomicUsize,
}

impl PlanCache {
    /// The most plans a cache holds: past this the least recently used goes.
    pub const MAX_PLANS: usize = 256;

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
        plans.clock += 1;
        let now = plans.clock;
        if let Some(e) = plans.entries.get_mut(&key) {
            e.used = now;
            return Some(e.plan.clone());
        }
        // Maps and subsets rebuilt every step (agent models) would otherwise
        // leave one plan per step behind.
        plans.drop_unreachable();
        plans.make_room();
        self.built.fetch_add(1, Ordering::Relaxed);
        // Colours and partitions are computed when a backend first asks.
        let plan = Arc::new(Plan::build_over(range.clone(), subset, block_size, &conflicts));
        tracing::debug!(
            set = set.name(),
            subset = subset.map(Subset::name),
            elements = range.len(),
            block_size,
            "plan made"
        );
        let maps = conflicts.iter().map(|c| c.reach.watch()).collect();
        plans.entries.insert(
            key,
            Entry {
                plan: plan.clone(),
                maps,
                used: now,
            },
        );
        Some(plan)
    }

    /// How many plans the cache holds.
    pub fn len(&self) -> usize {
        self.plans.lock().unwrap_or_else(|p| p.into_inner()).entries.len()
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

    #[test]
    fn plans_of_dropped_maps_are_dropped() {
        let nodes = Set::new("nodes", 50).unwrap();
        let acc = Dat::<f64>::zeros("acc", &nodes, 1).unwrap();
        let cache = PlanCache::default();
        // A ragged map rebuilt every step, as after births and deaths.
        for step in 0..300 {
            let targets: Vec<i32> = (0..50).map(|e| (e * 7 + step) % 50).collect();
            let offsets: Vec<usize> = (0..=50).collect();
            let r = crate::RaggedMap::new("links", &nodes, &nodes, offsets, targets).unwrap();
            let args = [ArgSpec::through_ragged(ArgData::Dat(&acc), Access::Inc, &r)];
            cache.plan(&nodes, None, 0..50, &args, 8).unwrap();
            assert!(cache.len() <= 2, "step {step}: {} plans cached", cache.len());
        }
        assert_eq!(cache.built(), 300);
    }

    #[test]
    fn the_cache_is_bounded_and_keeps_what_is_used() {
        let nodes = Set::new("nodes", 20).unwrap();
        let edges = Set::new("edges", 19).unwrap();
        let m = Map::new("e2n", &edges, &nodes, 2, (0..19).flat_map(|i| [i, i + 1]).collect()).unwrap();
        let acc = Dat::<f64>::zeros("acc", &nodes, 1).unwrap();
        let args = [ArgSpec::through_map(
            ArgData::Dat(&acc),
            Access::Inc,
            &m,
            MapIndex::Entry(0),
        )];
        let cache = PlanCache::default();
        let hot = cache.plan(&edges, None, 0..19, &args, 1).unwrap();
        // Live keys past the bound (every block size is another plan).
        for bs in 2..(2 * PlanCache::MAX_PLANS) {
            cache.plan(&edges, None, 0..19, &args, bs).unwrap();
            // The first plan stays in use.
            assert!(Arc::ptr_eq(&hot, &cache.plan(&edges, None, 0..19, &args, 1).unwrap()));
            assert!(cache.len() <= PlanCache::MAX_PLANS);
        }
        assert_eq!(cache.len(), PlanCache::MAX_PLANS);
        let built = cache.built();
        // The least recently used went: asking again rebuilds it.
        cache.plan(&edges, None, 0..19, &args, 2).unwrap();
        assert_eq!(cache.built(), built + 1);
    }
}
