//! `Set`: a number of entities (cells, edges, vertices, agents) that loops iterate over
//! and that Dats and Maps are built on; a cheap cloneable handle. A set may be split into
//! MPI regions (`SetRegions`) with a `Distribution`, carry stable global ids, or be
//! dynamic: a population of agents that are born, die, are permuted and migrate between
//! ranks, with every Dat on it kept in step and stale maps and subsets refused.
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use crate::population::Population;
use crate::Distribution;

use crate::{Error, Result, ScopedThreads, Workers};

/// How a set's local elements split into the four MPI regions
/// (docs/ARCHITECTURE.md, Distributed runs), in this order. On one process everything is `core`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SetRegions {
    /// Owned elements that touch no halo data.
    pub core: usize,
    /// Owned elements that touch halo data.
    pub owned: usize,
    /// Other ranks' elements computed here redundantly.
    pub exec_halo: usize,
    /// Read-only copies needed by the exec halo.
    pub nonexec_halo: usize,
}

impl SetRegions {
    /// Elements this rank owns (`core + owned`; saturating at `usize::MAX`,
    /// which no [`Set`] accepts).
    pub fn owned_size(&self) -> usize {
        self.core.saturating_add(self.owned)
    }

    /// Every local element, halos included (saturating at `usize::MAX`, which
    /// no [`Set`] accepts; see [`SetRegions::checked_total`]).
    pub fn total(&self) -> usize {
        self.checked_total().unwrap_or(usize::MAX)
    }

    /// Every local element, or `None` if the sum overflows `usize`.
    pub fn checked_total(&self) -> Option<usize> {
        self.core
            .checked_add(self.owned)?
            .checked_add(self.exec_halo)?
            .checked_add(self.nonexec_halo)
    }
}

/// A number of entities: cells, edges, vertices, agents. A cheap cloneable handle;
/// two handles are the same set when one was cloned from the other.
#[derive(Clone)]
pub struct Set(Arc<SetInner>);

struct SetInner {
    id: u64,
    name: String,
    regions: SetRegions,
    distribution: Option<Arc<dyn Distribution>>,
    /// Each local element's stable global id, when not its index.
    global_ids: Option<GlobalIds>,
    /// The size, ids and Dats of a set whose agents die and are born.
    population: Option<Population>,
    /// Handles of this set held by Dats op2 keeps for itself (random
    /// streams' ids): when only those remain, nothing can loop over the set.
    kept_by_op2: std::sync::atomic::AtomicUsize,
}

/// Explicit global ids, and their inverse built on the first lookup (a
/// distributed run gives every local set ids; few ever look one up).
struct GlobalIds {
    ids: Vec<u64>,
    index: OnceLock<HashMap<u64, usize>>,
}

impl GlobalIds {
    /// The ids of a set's local elements, checked for repeats (by sorting a
    /// copy: the check needs no table that outlives it).
    fn new(set: &str, ids: Vec<u64>) -> Result<GlobalIds> {
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_unstable_by_key(|&i| (ids[i], i));
        if let Some(w) = order.windows(2).find(|w| ids[w[0]] == ids[w[1]]) {
            return Err(Error::InvalidGlobalIds {
                set: set.to_string(),
                reason: format!("id {} is given to elements {} and {}", ids[w[0]], w[0], w[1]),
            });
        }
        Ok(GlobalIds {
            ids,
            index: OnceLock::new(),
        })
    }

    fn index_of(&self, id: u64) -> Option<usize> {
        let index = self
            .index
            .get_or_init(|| self.ids.iter().enumerate().map(|(i, &id)| (id, i)).collect());
        index.get(&id).copied()
    }
}

/// Largest set most constructors make: maps' entries and subsets' indices
/// are 32-bit.
pub const MAX_SET_SIZE: usize = i32::MAX as usize;

/// Largest set [`Set::new_long`] makes: generated code indexes elements with
/// signed 64-bit integers.
pub const MAX_LONG_SET_SIZE: usize = i64::MAX as usize;

impl Set {
    /// A set of `size` elements, all in the core region.
    ///
    /// # Errors
    /// [`Error::SetTooLarge`] if `size` exceeds `i32::MAX` (map entries are 32-bit).
    pub fn new(name: impl Into<String>, size: usize) -> Result<Set> {
        Set::with_regions(
            name,
            SetRegions {
                core: size,
                ..SetRegions::default()
            },
        )
    }

    /// A set of `size` elements that may exceed `i32::MAX` (OP2's
    /// `op_decl_map_long` meshes): maps into it need 64-bit entries
    /// ([`LongMap`](crate::LongMap)) once an entry passes `i32::MAX`. Loops over it, through maps into it and on its Dats run on
    /// every backend; features that index elements with 32-bit integers
    /// (subsets, ragged maps, stencils, agents, distribution over MPI ranks)
    /// refuse a set of more than `i32::MAX` elements with
    /// [`Error::LongSetUnsupported`]. A Dat of zeros on it takes memory only
    /// where it is written ([`crate::Dat::zeros`]).
    ///
    /// # Errors
    /// [`Error::SetTooLarge`] if `size` exceeds `i64::MAX`.
    pub fn new_long(name: impl Into<String>, size: usize) -> Result<Set> {
        let regions = SetRegions {
            core: size,
            ..SetRegions::default()
        };
        Ok(Set(Arc::new(Set::build_sized(
            name.into(),
            regions,
            None,
            None,
            MAX_LONG_SET_SIZE,
        )?)))
    }

    /// Refuses a set of more than `i32::MAX` elements for `what`, a feature
    /// that indexes elements with 32-bit integers.
    ///
    /// # Errors
    /// [`Error::LongSetUnsupported`] naming the set and `what`.
    pub fn check_narrow(&self, what: &str) -> Result<()> {
        let size = self.total_size();
        if size > MAX_SET_SIZE {
            return Err(Error::LongSetUnsupported {
                set: self.name().to_string(),
                size,
                what: what.to_string(),
            });
        }
        Ok(())
    }

    /// A set with explicit MPI regions.
    ///
    /// # Errors
    /// [`Error::SizeOverflow`] if the regions' sizes add up to more than
    /// `usize` holds, [`Error::SetTooLarge`] if they add up to more than
    /// `i32::MAX`.
    pub fn with_regions(name: impl Into<String>, regions: SetRegions) -> Result<Set> {
        Set::build(name.into(), regions, None, None)
    }

    /// A set of one rank of a distributed run: its local regions and the
    /// communication that keeps its halo current.
    ///
    /// # Errors
    /// As [`Set::with_regions`].
    pub fn distributed(
        name: impl Into<String>,
        regions: SetRegions,
        distribution: Arc<dyn Distribution>,
    ) -> Result<Set> {
        Set::build(name.into(), regions, Some(distribution), None)
    }

    /// A set of one element per id in `ids`: elements keep these stable
    /// global ids (agent or vertex ids of a graph, say) through distribution,
    /// and [`Set::index_of`] turns an id into its element, once per lookup,
    /// without loops ever seeing ids.
    ///
    /// # Errors
    /// [`Error::InvalidGlobalIds`] if an id repeats; as [`Set::new`] for the size.
    pub fn with_global_ids(name: impl Into<String>, ids: Vec<u64>) -> Result<Set> {
        let regions = SetRegions {
            core: ids.len(),
            ..SetRegions::default()
        };
        Set::build(name.into(), regions, None, Some(ids))
    }

    /// A dynamic set: a population of `len` agents (ids 0 to `len - 1`) that
    /// die and are born (`op2_agents::Lifecycle`). Its Dats start
    /// with room for `capacity` agents (at least `len`) and double when more
    /// are needed. Every change renumbers the agents (survivors keep their
    /// order, children follow in their parents' order), keeps their ids
    /// and gives each child the next id, so ids never repeat; maps, ragged
    /// maps and subsets made before a change are refused afterwards
    /// ([`Error::StaleIndices`]).
    ///
    /// # Errors
    /// [`Error::SetTooLarge`] if `len` exceeds `i32::MAX`.
    pub fn dynamic(name: impl Into<String>, len: usize, capacity: usize) -> Result<Set> {
        let regions = SetRegions {
            core: len,
            ..SetRegions::default()
        };
        let mut inner = Set::build_inner(name.into(), regions, None, None)?;
        inner.population = Some(Population::new(len, capacity));
        Ok(Set(Arc::new(inner)))
    }

    /// A dynamic set (as [`Set::dynamic`]) of `ids.len()` agents with the
    /// ids `ids`, in that order: e.g. a rank's share of the agents of a
    /// distributed run, numbered as on one rank, so that results do not
    /// depend on the rank count. Children get ids above the largest.
    ///
    /// # Errors
    /// [`Error::InvalidGlobalIds`] if an id repeats or is past `i64::MAX`
    /// (ids are `i64`s in Dats); [`Error::SetTooLarge`] as [`Set::dynamic`].
    pub fn dynamic_with_ids(name: impl Into<String>, ids: Vec<u64>, capacity: usize) -> Result<Set> {
        let name = name.into();
        let largest = i64::MAX as u64;
        if let Some(id) = ids.iter().find(|&&id| id > largest) {
            return Err(Error::InvalidGlobalIds {
                set: name,
                reason: format!("agent id {id} is past the largest id, {largest}"),
            });
        }
        let checked = GlobalIds::new(&name, ids)?;
        let regions = SetRegions {
            core: checked.ids.len(),
            ..SetRegions::default()
        };
        let mut inner = Set::build_inner(name, regions, None, None)?;
        inner.population = Some(Population::numbered(checked.ids, capacity));
        Ok(Set(Arc::new(inner)))
    }

    /// A rank's set of a distributed run whose local elements (halos
    /// included, in local order) have the global ids `ids`.
    ///
    /// # Errors
    /// As [`Set::with_regions`]; [`Error::InvalidGlobalIds`] if `ids` does
    /// not have one id per local element or an id repeats.
    pub fn distributed_with_global_ids(
        name: impl Into<String>,
        regions: SetRegions,
        distribution: Arc<dyn Distribution>,
        ids: Vec<u64>,
    ) -> Result<Set> {
        Set::build(name.into(), regions, Some(distribution), Some(ids))
    }

    fn build(
        name: String,
        regions: SetRegions,
        distribution: Option<Arc<dyn Distribution>>,
        ids: Option<Vec<u64>>,
    ) -> Result<Set> {
        Ok(Set(Arc::new(Set::build_inner(name, regions, distribution, ids)?)))
    }

    fn build_inner(
        name: String,
        regions: SetRegions,
        distribution: Option<Arc<dyn Distribution>>,
        ids: Option<Vec<u64>>,
    ) -> Result<SetInner> {
        Set::build_sized(name, regions, distribution, ids, MAX_SET_SIZE)
    }

    /// As `build_inner`, with at most `max` elements.
    fn build_sized(
        name: String,
        regions: SetRegions,
        distribution: Option<Arc<dyn Distribution>>,
        ids: Option<Vec<u64>>,
        max: usize,
    ) -> Result<SetInner> {
        let Some(total) = regions.checked_total() else {
            return Err(Error::SizeOverflow {
                kind: "set",
                name,
                quantity: "number of elements",
                expression: format!(
                    "core {} + owned {} + exec halo {} + non-exec halo {}",
                    regions.core, regions.owned, regions.exec_halo, regions.nonexec_halo
                ),
            });
        };
        if total > max {
            return Err(Error::SetTooLarge {
                set: name,
                size: total,
                max,
                hint: if max == MAX_SET_SIZE {
                    ": for more, Set::new_long makes a set with 64-bit indices"
                } else {
                    ""
                },
            });
        }
        let global_ids = match ids {
            None => None,
            Some(ids) if ids.len() != total => {
                return Err(Error::InvalidGlobalIds {
                    set: name,
                    reason: format!("{} ids for {total} local elements", ids.len()),
                })
            }
            Some(ids) => Some(GlobalIds::new(&name, ids)?),
        };
        Ok(SetInner {
            id: crate::id::next_id(),
            name,
            regions,
            distribution,
            global_ids,
            population: None,
            kept_by_op2: std::sync::atomic::AtomicUsize::new(0),
        })
    }

    /// The global id of local element `i` (`None` past the local elements):
    /// the id it was given, else its index in the set before distribution.
    ///
    /// # Panics
    /// If a dynamic set's ids must come back from a device (a sort there
    /// moved them) and cannot; [`Set::try_global_id`] returns that error.
    pub fn global_id(&self, i: usize) -> Option<u64> {
        self.try_global_id(i).unwrap_or_else(|e| panic!("{e}"))
    }

    /// As [`Set::global_id`].
    ///
    /// # Errors
    /// [`Error::Transfer`] if a dynamic set's ids must come back from a
    /// device and cannot.
    pub fn try_global_id(&self, i: usize) -> Result<Option<u64>> {
        if let Some(p) = &self.0.population {
            return p.global_id(i);
        }
        if i >= self.total_size() {
            return Ok(None);
        }
        Ok(Some(self.0.global_ids.as_ref().map_or(i as u64, |g| g.ids[i])))
    }

    /// The global ids of every local element, in local order.
    ///
    /// # Panics
    /// As [`Set::global_id`]; [`Set::try_global_ids`] returns the error.
    pub fn global_ids(&self) -> Cow<'_, [u64]> {
        self.try_global_ids().unwrap_or_else(|e| panic!("{e}"))
    }

    /// As [`Set::global_ids`].
    ///
    /// # Errors
    /// As [`Set::try_global_id`]; [`Error::HostOutOfMemory`] where the ids
    /// of a set without given ones (its indices) cannot be allocated.
    pub fn try_global_ids(&self) -> Result<Cow<'_, [u64]>> {
        if let Some(p) = &self.0.population {
            return p.global_ids().map(Cow::Owned);
        }
        Ok(match &self.0.global_ids {
            Some(g) => Cow::Borrowed(&g.ids),
            None => Cow::Owned(crate::host_memory::counting(self.name(), self.total_size(), |i| {
                i as u64
            })?),
        })
    }

    /// The local element with global id `id`, if this process has it.
    ///
    /// # Panics
    /// As [`Set::global_id`]; [`Set::try_index_of`] returns the error.
    pub fn index_of(&self, id: u64) -> Option<usize> {
        self.try_index_of(id).unwrap_or_else(|e| panic!("{e}"))
    }

    /// As [`Set::index_of`].
    ///
    /// # Errors
    /// As [`Set::try_global_id`].
    pub fn try_index_of(&self, id: u64) -> Result<Option<usize>> {
        if let Some(p) = &self.0.population {
            return p.index_of(id);
        }
        Ok(match &self.0.global_ids {
            Some(g) => g.index_of(id),
            None => usize::try_from(id).ok().filter(|&i| i < self.total_size()),
        })
    }

    /// The communication of a distributed set (none on one process).
    pub fn distribution(&self) -> Option<&Arc<dyn Distribution>> {
        self.0.distribution.as_ref()
    }

    /// The set's name.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// Number of elements a loop over this set visits on this process
    /// (owned elements; on one process, all of them).
    pub fn size(&self) -> usize {
        self.regions().owned_size()
    }

    /// Every local element, halos included: the length of a Dat on this set.
    pub fn total_size(&self) -> usize {
        self.regions().total()
    }

    /// The region sizes.
    pub fn regions(&self) -> SetRegions {
        match &self.0.population {
            Some(p) => SetRegions {
                core: p.len(),
                ..SetRegions::default()
            },
            None => self.0.regions,
        }
    }

    /// Whether the set is dynamic ([`Set::dynamic`]).
    pub fn is_dynamic(&self) -> bool {
        self.0.population.is_some()
    }

    /// How many times a dynamic set has been renumbered (0 for other sets):
    /// maps and subsets remember it to notice they are stale.
    pub fn generation(&self) -> u64 {
        self.0.population.as_ref().map_or(0, Population::generation)
    }

    /// The id the next agent born into a dynamic set gets (`None` for other
    /// sets).
    pub fn next_id(&self) -> Option<u64> {
        self.0.population.as_ref().map(Population::next_id)
    }

    /// Reorders a dynamic set's agents in every Dat on it at once: agent
    /// `k` afterwards is agent `order[k]` before, with its id (so ids no
    /// longer ascend with the index; [`Set::index_of`] still finds them).
    /// Used to keep agents that are near in space near in memory
    /// (`op2_agents::MessageList::sort_senders`).
    /// Like a birth or death it renumbers the set: maps, ragged maps and
    /// subsets made before are refused afterwards. An identity order
    /// changes nothing.
    ///
    /// # Errors
    /// [`Error::InvalidPermutation`] if the set is not dynamic or `order`
    /// is not a permutation of `0..size`; [`Error::SetInUse`] if a loop
    /// holds the set; [`Error::HostBorrow`] if one of its Dats is
    /// borrowed; [`Error::Transfer`] if a device copy cannot be brought
    /// back. On error nothing has moved.
    pub fn permute(&self, order: &[u32]) -> Result<()> {
        self.permute_on(order, &ScopedThreads::available())
    }

    /// As [`Set::permute`], on `workers` (a runtime, `&rt`, lends its
    /// backend's threads).
    ///
    /// # Errors
    /// As [`Set::permute`].
    pub fn permute_on(&self, order: &[u32], workers: &dyn Workers) -> Result<()> {
        match &self.0.population {
            Some(p) => p.permute(self.name(), order, workers),
            None => Err(Error::InvalidPermutation {
                set: self.name().to_string(),
                reason: "only a dynamic set (`Set::dynamic`) can be permuted".to_string(),
            }),
        }
    }

    /// The storage of a dynamic set's agents (`None` for a fixed set), for
    /// the agent layer.
    #[doc(hidden)]
    pub fn population(&self) -> Option<&Population> {
        self.0.population.as_ref()
    }

    /// Refuses a map or subset made at `generation` of this set if the set
    /// has changed since.
    pub(crate) fn check_generation(&self, what: &'static str, name: &str, made: u64) -> Result<()> {
        let now = self.generation();
        if now == made {
            return Ok(());
        }
        Err(Error::StaleIndices {
            what,
            name: name.to_string(),
            set: self.name().to_string(),
            made,
            now,
        })
    }

    /// Holds a dynamic set still (no births or deaths) until released with
    /// [`Set::release_use`]; `false` for other sets, which never change.
    #[doc(hidden)]
    pub fn try_use(&self) -> Result<bool> {
        match &self.0.population {
            None => Ok(false),
            Some(p) => p.in_use().try_shared().map(|()| true).map_err(|how| Error::SetInUse {
                set: self.name().to_string(),
                how,
            }),
        }
    }

    /// Releases a [`Set::try_use`] that returned `true`.
    #[doc(hidden)]
    pub fn release_use(&self) {
        if let Some(p) = &self.0.population {
            p.in_use().release_shared();
        }
    }

    /// Whether some handle of this set is held by anything but the Dats op2
    /// keeps for itself ([`Set::kept_by_op2`]): else no loop can run over
    /// it again, and those Dats may go.
    pub(crate) fn in_use_outside_op2(&self) -> bool {
        Arc::strong_count(&self.0) > self.0.kept_by_op2.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Counts (`true`) or uncounts a handle held by a Dat op2 keeps for
    /// itself on this set.
    pub(crate) fn kept_by_op2(&self, kept: bool) {
        let n = &self.0.kept_by_op2;
        match kept {
            true => n.fetch_add(1, std::sync::atomic::Ordering::AcqRel),
            false => n.fetch_sub(1, std::sync::atomic::Ordering::AcqRel),
        };
    }

    /// Whether two handles are the same set.
    pub fn same(&self, other: &Set) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// A process-wide unique identity, never reused: usable as a cache key.
    pub fn id(&self) -> u64 {
        self.0.id
    }
}

impl fmt::Debug for Set {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Set({:?}, {})", self.name(), self.total_size())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_set_is_all_core() {
        let s = Set::new("cells", 7).unwrap();
        assert_eq!(s.size(), 7);
        assert_eq!(s.total_size(), 7);
        assert_eq!(s.regions().core, 7);
        assert_eq!(s.name(), "cells");
    }

    #[test]
    fn identity_follows_clones_not_names() {
        let a = Set::new("a", 3).unwrap();
        let b = Set::new("a", 3).unwrap();
        assert!(a.same(&a.clone()));
        assert!(!a.same(&b));
    }

    #[test]
    fn regions_add_up() {
        let r = SetRegions {
            core: 4,
            owned: 2,
            exec_halo: 1,
            nonexec_halo: 3,
        };
        let s = Set::with_regions("s", r).unwrap();
        assert_eq!(s.size(), 6);
        assert_eq!(s.total_size(), 10);
    }

    #[test]
    fn overflowing_regions_are_an_error() {
        let r = SetRegions {
            core: usize::MAX,
            owned: 1,
            exec_halo: 0,
            nonexec_halo: 0,
        };
        assert_eq!(r.checked_total(), None);
        assert_eq!(r.total(), usize::MAX);
        let e = Set::with_regions("wrapped", r).unwrap_err();
        assert!(matches!(e, Error::SizeOverflow { kind: "set", .. }), "{e:?}");
        let msg = e.to_string();
        assert!(msg.contains("wrapped") && msg.contains("overflows"), "{msg}");
        let e = Set::with_regions(
            "halo",
            SetRegions {
                core: 1,
                owned: 0,
                exec_halo: MAX_SET_SIZE,
                nonexec_halo: 0,
            },
        )
        .unwrap_err();
        assert!(matches!(e, Error::SetTooLarge { .. }), "{e:?}");
    }

    #[test]
    fn too_large_set_is_an_error() {
        let e = Set::new("huge", MAX_SET_SIZE + 1).unwrap_err();
        assert!(matches!(e, Error::SetTooLarge { .. }));
        assert!(e.to_string().contains("huge"));
    }

    #[test]
    fn global_ids_are_indices_unless_given() {
        let plain = Set::new("plain", 3).unwrap();
        assert_eq!(plain.global_id(2), Some(2));
        assert_eq!(plain.global_id(3), None);
        assert_eq!(plain.index_of(1), Some(1));
        assert_eq!(plain.index_of(3), None);
        assert_eq!(&*plain.global_ids(), &[0, 1, 2]);

        let agents = Set::with_global_ids("agents", vec![1 << 40, 7, 19]).unwrap();
        assert_eq!(agents.size(), 3);
        assert_eq!(agents.global_id(0), Some(1 << 40));
        assert_eq!(agents.index_of(19), Some(2));
        assert_eq!(agents.index_of(2), None);
        assert_eq!(&*agents.global_ids(), &[1 << 40, 7, 19]);
    }

    #[test]
    fn repeated_or_miscounted_ids_are_errors() {
        let e = Set::with_global_ids("agents", vec![5, 6, 5]).unwrap_err();
        assert!(matches!(e, Error::InvalidGlobalIds { .. }), "{e:?}");
        assert!(
            e.to_string().contains("id 5 is given to elements 0 and 2") && e.to_string().contains("agents"),
            "{e}"
        );
        let regions = SetRegions {
            core: 2,
            ..SetRegions::default()
        };
        let e = Set::build("short".into(), regions, None, Some(vec![1])).unwrap_err();
        assert!(e.to_string().contains("1 ids for 2 local elements"), "{e}");
    }
}
