//! The changing part of a dynamic set (a population whose agents die and are
//! born): its size, its generation (how many times its elements were
//! renumbered), its agents' ids, and the Dats on it, which every change
//! reorders together: on the host here, in device memory in `on_device.rs`.

mod device_ids;
mod migration;
mod on_device;

pub use migration::repeated_id;
pub use migration::{AgentLayout, AgentPack};
pub use on_device::{identity_order, DeviceAdoption, DeviceReorder};

use std::any::Any;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

use crate::workers::gather_elements;
use crate::{number_by_parent_id, ArgRoute, ArgSpec, BirthNumbering, BorrowFlag, Error, Result, Set, Workers};

/// A Dat of a dynamic set, as a reordering sees it: bytes per element, and
/// its storage's borrow, sync and resize.
pub trait Member: Send + Sync {
    /// The Dat's identity (as `DatHandle::id`).
    fn member_id(&self) -> usize;
    fn member_name(&self) -> &str;
    fn member_flag(&self) -> &BorrowFlag;
    /// Brings the host copy up to date (the caller holds the exclusive borrow).
    fn sync_host(&self) -> Result<()>;
    /// Brings the host copy up to date for reading, a device copy staying
    /// valid (the caller holds a borrow).
    fn sync_host_read(&self) -> Result<()>;
    fn element_bytes(&self) -> usize;
    /// The host data (valid while the exclusive borrow is held).
    fn host_bytes(&self) -> *mut u8;
    /// Makes room for `elements` elements (reallocating by doubling).
    fn reserve_elements(&self, elements: usize) -> Result<()>;
    /// Sets the number of elements (at most what was reserved); the host
    /// holds the data afterwards.
    fn set_elements(&self, elements: usize);
    /// Sets the number of elements on the host side only, for a change
    /// made on the device (whose lock the caller holds).
    fn set_host_elements(&self, elements: usize);
    /// The device side.
    fn member_device(&self) -> &crate::DeviceCell;
    /// The element type.
    fn member_scalar(&self) -> crate::ScalarType;
}

/// How a dynamic set changes: the elements that stay (ascending) and the
/// parents of the new ones, in the order the new ones are appended.
pub struct Reorder<'a> {
    /// Elements that stay, ascending: element `k` afterwards is `survivors[k]`.
    pub survivors: &'a [u32],
    /// Element `survivors.len() + k` afterwards is a child of `parents[k]`.
    pub parents: &'a [u32],
    /// The children's ids (one per parent) and the next id afterwards.
    pub ids: NewIds<'a>,
    /// The member (by id) a child's value of a member comes from: its
    /// offspring Dat, or `None` to copy the parent's value.
    pub source_of: &'a dyn Fn(usize) -> Option<usize>,
    /// The set's generation when the survivors and parents were chosen.
    pub generation: u64,
    /// A member (by id) zeroed afterwards, while still held: the fates,
    /// which children copied from their parents.
    pub zero: Option<usize>,
    /// A member (by id, `i64`, dim 1) given the new ids afterwards, while
    /// still held: the Lifecycle's ids, which children copied too.
    pub ids_into: Option<usize>,
}

/// `Err` unless the set is still at `generation`: another thread changed
/// it (births, deaths, a sort, a migration) after the fates were read, and
/// the chosen indices would name other agents.
pub fn check_unchanged(population: &Population, set: &str, generation: u64) -> Result<()> {
    if population.generation() == generation {
        return Ok(());
    }
    Err(Error::SetChanged {
        set: set.to_string(),
        reason: "its fates were being applied: births, deaths, a sort or a migration on another thread came \
                 between reading the fates and the change, which would have moved other agents; apply again"
            .to_string(),
    })
}

/// The member a child's value of `m` comes from, if not `m` itself.
fn source_of<'m>(
    order: &Reorder<'_>,
    members: &'m [Arc<dyn Member>],
    m: &Arc<dyn Member>,
) -> Option<&'m Arc<dyn Member>> {
    (order.source_of)(m.member_id()).and_then(|id| members.iter().find(|s| s.member_id() == id))
}

/// The ids of the agents a change adds.
#[derive(Clone, Copy)]
pub enum NewIds<'a> {
    /// The next ids in order, this many.
    Next(usize),
    /// These (one per new agent), then `next` is the next id.
    Given {
        /// The ids, in order.
        ids: &'a [u64],
        /// The next id after them.
        next: u64,
    },
}

impl NewIds<'_> {
    fn count(&self) -> usize {
        match self {
            NewIds::Next(n) => *n,
            NewIds::Given { ids, .. } => ids.len(),
        }
    }
}

/// The changing state of a dynamic set.
pub struct Population {
    len: AtomicUsize,
    generation: AtomicU64,
    ids: Mutex<Ids>,
    members: Mutex<Vec<Weak<dyn Member>>>,
    /// Held shared by loops that must not see the set change under them
    /// (maps from or into it), exclusively while it changes.
    in_use: BorrowFlag,
    /// Room each new Dat allocates (elements).
    capacity: usize,
    /// Children's values, one buffer per member, kept between changes.
    scratch: Mutex<Vec<Vec<u8>>>,
    /// Device buffers kept between changes on the device.
    device_scratch: Mutex<on_device::DeviceScratch>,
    /// How children are numbered across processes (`None`: this process
    /// alone, by parent id).
    numbering: Mutex<Option<Arc<dyn BirthNumbering>>>,
    /// The set's `op2_agents::Lifecycle`, without keeping it: a set
    /// has at most one (a second would apply its own fates to children the
    /// first made).
    lifecycle: Mutex<Option<Weak<dyn Any + Send + Sync>>>,
}

/// The agents' ids. Births and deaths keep them ascending (survivors keep
/// their order, children get ids above every id given so far), so a lookup
/// is a binary search; a permutation (agents sorted by place) mixes them,
/// and lookups then search an index in id order, built on first use.
struct Ids {
    ids: Vec<u64>,
    next: u64,
    /// Whether the ids ascend with the index.
    ascending: bool,
    /// The indices in id order (only while not ascending; built lazily).
    by_id: Option<Vec<u32>>,
    /// The ids in device memory, where a sort on the device moved them
    /// (`device_ids.rs`): newer than `ids` until brought back.
    device: Option<device_ids::DeviceIds>,
}

impl Ids {
    /// After a change: whether the ids still ascend, and no stale index.
    fn changed(&mut self) {
        self.ascending = self.ids.windows(2).all(|w| w[0] < w[1]);
        self.by_id = None;
    }
}

/// The largest agent id: kernels see ids as `i64`.
pub const MAX_AGENT_ID: u64 = i64::MAX as u64;

/// A round of `count` children starting at id `next` would pass
/// [`MAX_AGENT_ID`].
fn ids_used_up(set: &str, next: u64, count: u64) -> Error {
    Error::InvalidLifecycle {
        set: set.to_string(),
        reason: format!(
            "{count} children would get ids from {next} on, past the largest agent id {MAX_AGENT_ID} (ids are \
             i64 in kernels and never reused): the id space is used up, so no agent was born or died this round; \
             give the agents smaller ids (`Set::dynamic_with_ids`)"
        ),
    }
}

impl Population {
    /// A population of `len` agents numbered from 0, room for `capacity`.
    pub fn new(len: usize, capacity: usize) -> Population {
        Population::numbered((0..len as u64).collect(), capacity)
    }

    /// Agents with the ids `ids` (distinct, at most `i64::MAX`: checked by
    /// the caller).
    pub fn numbered(ids: Vec<u64>, capacity: usize) -> Population {
        let len = ids.len();
        let next = ids.iter().max().map_or(0, |&m| m + 1);
        let mut ids = Ids {
            ids,
            next,
            ascending: true,
            by_id: None,
            device: None,
        };
        ids.changed();
        Population {
            len: AtomicUsize::new(len),
            generation: AtomicU64::new(0),
            ids: Mutex::new(ids),
            members: Mutex::new(Vec::new()),
            in_use: BorrowFlag::default(),
            capacity: capacity.max(len),
            scratch: Mutex::new(Vec::new()),
            device_scratch: Mutex::new(on_device::DeviceScratch::default()),
            numbering: Mutex::new(None),
            lifecycle: Mutex::new(None),
        }
    }

    /// The number of agents.
    #[allow(clippy::len_without_is_empty)] // a count, not a container
    pub fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }

    /// The agents the Dats have room for without growing.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// How many times the agents were renumbered.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The set's borrow: shared by loops over it, exclusive for a change.
    pub fn in_use(&self) -> &BorrowFlag {
        &self.in_use
    }

    /// Registers a new Dat. Its maker holds the set shared meanwhile
    /// (`SetStill` in `dat.rs`), and a change holds it exclusively before it
    /// lists the members ([`Population::take_set`]), so a Dat is either
    /// listed by the change or made after it, never missed with the old size.
    pub fn register(&self, member: Weak<dyn Member>) {
        let mut members = self.members.lock().unwrap_or_else(|p| p.into_inner());
        members.retain(|m| m.strong_count() > 0);
        members.push(member);
    }

    /// Agent `i`'s id.
    ///
    /// # Errors
    /// [`Error::Transfer`] if the ids must come back from a device (a
    /// sort there moved them) and cannot.
    pub fn global_id(&self, i: usize) -> Result<Option<u64>> {
        Ok(self.host_ids()?.ids.get(i).copied())
    }

    /// Every agent's id, in element order.
    ///
    /// # Errors
    /// As [`Population::global_id`].
    pub fn global_ids(&self) -> Result<Vec<u64>> {
        Ok(self.host_ids()?.ids.clone())
    }

    /// Writes the ids into `out` (one per element), without allocating.
    ///
    /// # Errors
    /// As [`Population::global_id`].
    pub fn copy_ids(&self, out: &mut [i64]) -> Result<()> {
        let ids = self.host_ids()?;
        for (o, &id) in out.iter_mut().zip(&ids.ids) {
            *o = id as i64;
        }
        Ok(())
    }

    /// The element of the agent with id `id`.
    ///
    /// # Errors
    /// As [`Population::global_id`].
    pub fn index_of(&self, id: u64) -> Result<Option<usize>> {
        let mut guard = self.host_ids()?;
        let Ids {
            ids, ascending, by_id, ..
        } = &mut *guard;
        if *ascending {
            return Ok(ids.binary_search(&id).ok());
        }
        let by_id = by_id.get_or_insert_with(|| {
            let mut order: Vec<u32> = (0..ids.len() as u32).collect();
            order.sort_unstable_by_key(|&i| ids[i as usize]);
            order
        });
        Ok(by_id
            .binary_search_by_key(&id, |&i| ids[i as usize])
            .ok()
            .map(|k| by_id[k] as usize))
    }

    /// Calls `f` with the ids (one per element) and whether they ascend.
    ///
    /// # Errors
    /// As [`Population::global_id`].
    pub fn with_ids<R>(&self, f: impl FnOnce(&[u64], bool) -> R) -> Result<R> {
        let ids = self.host_ids()?;
        Ok(f(&ids.ids, ids.ascending))
    }

    /// Whether the ids ascend with the index, without bringing them to the
    /// host (after a sort on a device: `false`).
    pub fn ids_ascend(&self) -> bool {
        self.ids.lock().unwrap_or_else(|p| p.into_inner()).ascending
    }

    /// Records `life` as the set's lifecycle, made by `make`, unless the
    /// set has one still in use (then `Err` with what `refuse` says).
    pub fn adopt_lifecycle<T: Any + Send + Sync>(
        &self,
        make: impl FnOnce() -> Result<Arc<T>>,
        refuse: impl FnOnce() -> Error,
    ) -> Result<Arc<T>> {
        let mut slot = self.lifecycle.lock().unwrap_or_else(|p| p.into_inner());
        if slot.as_ref().is_some_and(|w| w.strong_count() > 0) {
            return Err(refuse());
        }
        let life = make()?;
        let weak: Weak<dyn Any + Send + Sync> = Arc::downgrade(&life) as Weak<dyn Any + Send + Sync>;
        *slot = Some(weak);
        Ok(life)
    }

    /// Whether `births` children can get ids from the next on without
    /// passing [`MAX_AGENT_ID`].
    pub fn check_ids_left(&self, set: &str, births: usize) -> Result<()> {
        let next = self.next_id();
        match (births as u64) > (MAX_AGENT_ID + 1).saturating_sub(next) {
            true => Err(ids_used_up(set, next, births as u64)),
            false => Ok(()),
        }
    }

    /// The id the next child gets.
    pub fn next_id(&self) -> u64 {
        self.ids.lock().unwrap_or_else(|p| p.into_inner()).next
    }

    /// Numbers children across processes with `numbering` from now on.
    pub fn number_births_with(&self, numbering: Arc<dyn BirthNumbering>) {
        *self.numbering.lock().unwrap_or_else(|p| p.into_inner()) = Some(numbering);
    }

    /// Numbers one round of children: the child of `parents[k]` (element
    /// indices) gets `children[k]`, by its parent's id ([`BirthNumbering`]).
    /// Returns the next id afterwards, which the caller stores with the
    /// change (or with [`Population::set_next_id`] if nothing changes).
    /// With `parents` `None` (this process failed before numbering) it
    /// only takes part in a numbering across processes, so that the
    /// others are not left waiting (and returns the numbering's error);
    /// alone it returns the next id unchanged.
    pub fn number_children(&self, set: &str, parents: Option<&[u32]>, children: &mut Vec<u64>) -> Result<u64> {
        let parent_ids: Option<Vec<u64>> = match parents {
            Some(p) => {
                let ids = self.host_ids()?;
                Some(p.iter().map(|&e| ids.ids[e as usize]).collect())
            }
            None => None,
        };
        self.number_children_of(set, parent_ids.as_deref(), children)
    }

    /// As [`Population::number_children`], for children whose parents are
    /// agents of another set (a type giving birth to this one's), given by
    /// their ids (unique among the parents; ordered by them).
    pub fn number_children_of(&self, set: &str, parent_ids: Option<&[u64]>, children: &mut Vec<u64>) -> Result<u64> {
        let next = self.host_ids()?.next;
        let numbering = self.numbering.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let after = match (numbering, parent_ids) {
            (Some(n), parents) => n.number(set, parents, next, children)?,
            // `next` is at most MAX_AGENT_ID + 1 (checked every round): no sum wraps.
            (None, Some(parents)) => number_by_parent_id(parents, next, children),
            (None, None) => next,
        };
        // One check for both ways (across processes every process sees the
        // same round, so all refuse it).
        if after > MAX_AGENT_ID + 1 {
            return Err(ids_used_up(set, next, after.saturating_sub(next)));
        }
        Ok(after)
    }

    /// After a change that failed once its children were numbered: across
    /// processes the round's ids stay used (the others used theirs), so
    /// the next id moves past them; alone nothing changed.
    pub fn numbering_failed(&self, next: u64) {
        if self.numbers_across_processes() {
            self.set_next_id(next);
        }
    }

    /// Whether children are numbered across processes.
    pub fn numbers_across_processes(&self) -> bool {
        self.numbering.lock().unwrap_or_else(|p| p.into_inner()).is_some()
    }

    /// Sets the id the next child gets (never lowering it): after a round
    /// in which other processes had children and this one none.
    pub fn set_next_id(&self, next: u64) {
        let mut ids = self.ids.lock().unwrap_or_else(|p| p.into_inner());
        ids.next = ids.next.max(next);
    }

    /// Renumbers the set as `order` says, in every Dat on it at once: each
    /// keeps its survivors' values, in order, then gets its children's
    /// (from `order.source_of`, else from the parent). Survivors keep their
    /// ids and children get the next ids in order. All or nothing: every
    /// Dat is borrowed, brought to the host and given room before anything
    /// moves, so an error leaves the set and its Dats as they were.
    ///
    /// # Errors
    /// [`Error::SetInUse`] if a loop over the set (or through a map from
    /// or into it) is running; [`Error::HostBorrow`] naming the Dat if one
    /// is borrowed; [`Error::SetTooLarge`] past `MAX_SET_SIZE`;
    /// [`Error::Transfer`] or [`Error::HostOutOfMemory`] from the Dats.
    pub fn reorder(&self, set: &str, order: &Reorder<'_>, workers: &dyn Workers) -> Result<()> {
        let new_len = order.survivors.len() + order.parents.len();
        check_size(set, new_len)?;
        let _set = self.take_set(set, true)?;
        check_unchanged(self, set, order.generation)?;
        let members = self.members();
        let _held = self.hold(&members)?;
        self.take_ids_home()?;
        for m in &members {
            m.reserve_elements(new_len)?;
        }
        // Children's values first: a source may itself be reordered below.
        // One buffer per member for them, and one for a member's survivors.
        let old_len = self.len();
        let mut scratch = self.scratch.lock().unwrap_or_else(|p| p.into_inner());
        scratch.resize_with(members.len() + 1, Vec::new);
        let (children, survivors) = scratch.split_at_mut(members.len());
        let survivors = &mut survivors[0];
        for m in &members {
            // Read below as `old_len` elements of the member's size: a source
            // of another shape would be read past its end.
            if let Some(source) = source_of(order, &members, m).filter(|s| s.element_bytes() != m.element_bytes()) {
                return Err(Error::InvalidLifecycle {
                    set: set.to_string(),
                    reason: format!(
                        "children's values of `{}` come from `{}`, whose elements have another size",
                        m.member_name(),
                        source.member_name()
                    ),
                });
            }
        }
        for (m, buf) in members.iter().zip(children.iter_mut()) {
            let eb = m.element_bytes();
            let source = source_of(order, &members, m).unwrap_or(m);
            // SAFETY: every member is borrowed exclusively and holds the
            // set's `old_len` elements; parents are elements of the set.
            let src = unsafe { std::slice::from_raw_parts(source.host_bytes(), old_len * eb) };
            gather_elements(src, eb, order.parents, buf, workers);
        }
        // Nobody died: the survivors are all, in place.
        let all_survive = order.survivors.len() == old_len;
        for (m, buf) in members.iter().zip(children.iter()) {
            let eb = m.element_bytes();
            if !all_survive {
                // SAFETY: as above.
                let src = unsafe { std::slice::from_raw_parts(m.host_bytes(), old_len * eb) };
                gather_elements(src, eb, order.survivors, survivors, workers);
            }
            m.set_elements(new_len);
            let data = m.host_bytes();
            // SAFETY: room for `new_len` elements was reserved above, and
            // the buffers hold the survivors' and children's elements.
            unsafe {
                if !all_survive {
                    std::ptr::copy_nonoverlapping(survivors.as_ptr(), data, survivors.len());
                }
                std::ptr::copy_nonoverlapping(buf.as_ptr(), data.add(order.survivors.len() * eb), buf.len());
            }
        }
        self.renumber(Some(order.survivors), order.survivors.len(), order.ids);
        // Still held: nothing can borrow these between the move and them.
        for m in &members {
            let data = m.host_bytes();
            if Some(m.member_id()) == order.zero {
                // SAFETY: held exclusively, `new_len` elements long.
                unsafe { std::ptr::write_bytes(data, 0, new_len * m.element_bytes()) };
            }
            if Some(m.member_id()) == order.ids_into && m.element_bytes() == 8 {
                // SAFETY: as above; an `i64` member of dim 1 (checked size).
                self.copy_ids(unsafe { std::slice::from_raw_parts_mut(data as *mut i64, new_len) })?;
            }
        }
        Ok(())
    }

    /// After a change: the ids of the survivors (`None`: the first
    /// `kept` elements, in place) and of the new agents, the length and
    /// the generation.
    fn renumber(&self, survivors: Option<&[u32]>, kept: usize, new: NewIds<'_>) {
        let mut guard = self.ids.lock().unwrap_or_else(|p| p.into_inner());
        // Every change took the ids home before it moved anything.
        debug_assert!(guard.device.as_ref().is_none_or(|d| !d.host_stale()));
        guard.device = None;
        let Ids { ids, next, .. } = &mut *guard;
        if let Some(survivors) = survivors {
            // Ascending, so each id moves down or stays.
            for (to, &from) in survivors.iter().enumerate() {
                ids[to] = ids[from as usize];
            }
        }
        ids.truncate(kept);
        match new {
            NewIds::Next(births) => {
                ids.extend(*next..*next + births as u64);
                *next += births as u64;
            }
            NewIds::Given {
                ids: given,
                next: after,
            } => {
                ids.extend_from_slice(given);
                *next = (*next).max(after);
            }
        }
        guard.changed();
        self.len.store(kept + new.count(), Ordering::Release);
        self.generation.fetch_add(1, Ordering::AcqRel);
    }
}

impl Population {
    fn members(&self) -> Vec<std::sync::Arc<dyn Member>> {
        let mut m = self.members.lock().unwrap_or_else(|p| p.into_inner());
        m.retain(|w| w.strong_count() > 0);
        m.iter().filter_map(Weak::upgrade).collect()
    }

    /// Holds the set exclusively and every member's exclusive borrow, with
    /// the host copies brought up to date; released when the result drops.
    fn hold<'a>(&'a self, members: &'a [std::sync::Arc<dyn Member>]) -> Result<Vec<Release<'a>>> {
        let held = self.hold_unsynced(members)?;
        for m in members {
            m.sync_host()?;
        }
        Ok(held)
    }

    /// As [`Population::hold`], the data left where it is.
    fn hold_unsynced<'a>(&'a self, members: &'a [std::sync::Arc<dyn Member>]) -> Result<Vec<Release<'a>>> {
        self.take(members, true)
    }

    /// The set's own borrow (exclusive, or shared). Taken before the
    /// members are listed ([`Population::members`]): no Dat can be made on
    /// the set between the list and the change ([`Population::register`]).
    fn take_set(&self, set: &str, exclusive: bool) -> Result<Release<'_>> {
        self.in_use.try_borrow(exclusive).map_err(|how| Error::SetInUse {
            set: set.to_string(),
            how,
        })?;
        Ok(Release(&self.in_use, exclusive))
    }

    /// Every member's borrow (exclusive, or shared); the set itself is
    /// held already ([`Population::take_set`]).
    fn take<'a>(&'a self, members: &'a [std::sync::Arc<dyn Member>], exclusive: bool) -> Result<Vec<Release<'a>>> {
        let mut held = Vec::with_capacity(members.len());
        for m in members {
            m.member_flag().try_borrow(exclusive).map_err(|how| Error::HostBorrow {
                name: m.member_name().to_string(),
                how,
            })?;
            held.push(Release(m.member_flag(), exclusive));
        }
        Ok(held)
    }

    /// Whether the set and every member could be held exclusively now.
    pub fn check_changeable(&self, set: &str) -> Result<()> {
        let _set = self.take_set(set, true)?;
        let members = self.members();
        self.take(&members, true).map(drop)
    }

    /// Makes the set `len` elements long in every Dat on it: the first
    /// `min(len, old)` keep their values, new ones are zeros with new ids.
    /// (A message list's set follows its senders' size this way.)
    ///
    /// # Errors
    /// As [`Population::reorder`].
    pub fn resize(&self, set: &str, len: usize) -> Result<()> {
        if len == self.len() {
            return Ok(());
        }
        let _set = self.take_set(set, true)?;
        let members = self.members();
        let _held = self.hold(&members)?;
        self.take_ids_home()?;
        for m in &members {
            m.reserve_elements(len)?;
        }
        for m in &members {
            m.set_elements(len);
        }
        let mut guard = self.ids.lock().unwrap_or_else(|p| p.into_inner());
        guard.device = None;
        let Ids { ids, next, .. } = &mut *guard;
        let old = ids.len();
        ids.truncate(len);
        if len > old {
            ids.extend(*next..*next + (len - old) as u64);
            *next += (len - old) as u64;
        }
        guard.changed();
        self.len.store(len, Ordering::Release);
        self.generation.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }
}

impl Population {
    /// As [`Population::resize`], for a set whose Dats are all written
    /// anew next (a message list's, by its build): nothing is brought to
    /// the host, and device copies stay where they are (dropped when too
    /// small), their values unspecified until written.
    ///
    /// # Errors
    /// As [`Population::reorder`].
    pub fn resize_for_overwrite(&self, set: &str, len: usize) -> Result<()> {
        if len == self.len() {
            return Ok(());
        }
        let _set = self.take_set(set, true)?;
        let members = self.members();
        let _held = self.hold_unsynced(&members)?;
        self.take_ids_home()?;
        for m in &members {
            m.reserve_elements(len)?;
        }
        for m in &members {
            let mut slot = m.member_device().lock();
            if slot
                .buffer
                .as_ref()
                .is_some_and(|b| b.bytes() < len * m.element_bytes())
            {
                slot.buffer = None;
                slot.state = crate::DeviceState::DeviceUnallocated;
            }
            // New elements are zeros on the host only.
            if len > self.len() && slot.state == crate::DeviceState::Both {
                slot.state = crate::DeviceState::Host;
            }
            m.set_host_elements(len);
        }
        let old = self.len();
        let births = len.saturating_sub(old);
        self.renumber(None, len.min(old), NewIds::Next(births));
        Ok(())
    }

    /// Reorders the elements in every Dat on the set at once: element `k`
    /// afterwards is element `order[k]` before; ids move with their agents
    /// (they no longer ascend). An identity order changes nothing. All or
    /// nothing, as [`Population::reorder`].
    ///
    /// # Errors
    /// [`Error::InvalidPermutation`] if `order` is not a permutation of the
    /// set's elements; as [`Population::reorder`].
    pub fn permute(&self, set: &str, order: &[u32], workers: &dyn Workers) -> Result<()> {
        if let Some(work) = workers.device_work() {
            return self.permute_on_device(set, order, work);
        }
        let _set = self.take_set(set, true)?;
        let members = self.members();
        let _held = self.hold(&members)?;
        check_permutation(set, order, self.len())?;
        self.take_ids_home()?;
        if order.iter().enumerate().all(|(k, &o)| k == o as usize) {
            return Ok(());
        }
        let mut scratch = self.scratch.lock().unwrap_or_else(|p| p.into_inner());
        if scratch.is_empty() {
            scratch.push(Vec::new());
        }
        let buf = &mut scratch[0];
        for m in &members {
            let eb = m.element_bytes();
            let data = m.host_bytes();
            // SAFETY: every member is borrowed exclusively and holds the
            // set's elements; `order` holds elements of the set (checked).
            gather_elements(
                unsafe { std::slice::from_raw_parts(data, order.len() * eb) },
                eb,
                order,
                buf,
                workers,
            );
            // SAFETY: `buf` holds exactly the set's elements of this member.
            unsafe { std::ptr::copy_nonoverlapping(buf.as_ptr(), data, buf.len()) };
            // The host copy is now the only current one.
            m.set_elements(order.len());
        }
        let mut guard = self.ids.lock().unwrap_or_else(|p| p.into_inner());
        guard.device = None;
        let permuted: Vec<u64> = order.iter().map(|&o| guard.ids[o as usize]).collect();
        guard.ids = permuted;
        guard.changed();
        self.generation.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }
}

/// Refuses a set of more than `MAX_SET_SIZE` elements.
fn check_size(set: &str, len: usize) -> Result<()> {
    if len <= crate::set::MAX_SET_SIZE {
        return Ok(());
    }
    Err(Error::SetTooLarge {
        set: set.to_string(),
        size: len,
        max: crate::set::MAX_SET_SIZE,
        hint: " (agents are indexed with 32-bit integers)",
    })
}

/// Whether `order` holds each of `0..len` once.
fn check_permutation(set: &str, order: &[u32], len: usize) -> Result<()> {
    let bad = |reason: String| Error::InvalidPermutation {
        set: set.to_string(),
        reason,
    };
    if order.len() != len {
        return Err(bad(format!("the order has {} entries for {len} elements", order.len())));
    }
    let mut seen = vec![false; len];
    for (k, &o) in order.iter().enumerate() {
        match seen.get_mut(o as usize) {
            None => {
                return Err(bad(format!(
                    "entry {k} is {o}, past the last element {}",
                    len as i64 - 1
                )))
            }
            Some(true) => return Err(bad(format!("element {o} appears twice (again at entry {k})"))),
            Some(s) => *s = true,
        }
    }
    Ok(())
}

/// Releases a borrow flag when dropped.
struct Release<'a>(&'a BorrowFlag, bool);

impl Drop for Release<'_> {
    fn drop(&mut self) {
        self.0.release(self.1);
    }
}

/// Holds still, while a loop runs, the dynamic sets it indexes: its set and
/// the sets its maps start from and point into, so that no births or deaths
/// renumber them under it (a change meanwhile is refused with
/// [`Error::SetInUse`]). Other sets never change and are not held.
pub struct SetsInUse<'a> {
    held: Vec<&'a Set>,
}

impl<'a> SetsInUse<'a> {
    /// Holds `set` and the sets of `args`' maps that are dynamic.
    ///
    /// # Errors
    /// [`Error::SetInUse`] if one of them is changing right now.
    pub fn take(set: &'a Set, args: &'a [ArgSpec<'a>]) -> Result<SetsInUse<'a>> {
        let mut sets = SetsInUse { held: Vec::new() };
        // No allocation unless a set is dynamic: loops over fixed sets pay
        // one check per set.
        let maps = args.iter().flat_map(|a| match a.route {
            ArgRoute::Map(m) => Some([m.map.from_set(), m.map.to_set()]),
            ArgRoute::Ragged(r) => Some([r.from_set(), r.to_set()]),
            ArgRoute::Direct | ArgRoute::Whole(_) => None,
        });
        let maps = maps.flatten();
        for s in std::iter::once(set).chain(maps) {
            if s.is_dynamic() && !sets.held.iter().any(|h| h.same(s)) && s.try_use()? {
                sets.held.push(s);
            }
        }
        Ok(sets)
    }
}

impl Drop for SetsInUse<'_> {
    fn drop(&mut self) {
        for s in &self.held {
            s.release_use();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Dat, DatHandle, ScopedThreads};

    /// A child's values may come from another member only if its elements
    /// are the same size: the move reads the source as the member's shape.
    #[test]
    fn a_reorder_refuses_a_source_of_another_shape() {
        let set = Set::dynamic("agents", 4, 8).unwrap();
        let x = Dat::from_vec("x", &set, 1, vec![1.0f64, 2.0, 3.0, 4.0]).unwrap();
        let wide = Dat::<f64>::zeros("wide", &set, 3).unwrap();
        let narrow = Dat::<f32>::zeros("narrow", &set, 1).unwrap();
        let (wide_id, narrow_id) = (DatHandle::id(&wide), DatHandle::id(&narrow));
        let population = set.population().unwrap();
        let reorder = |source_of: &dyn Fn(usize) -> Option<usize>| {
            population.reorder(
                "agents",
                &Reorder {
                    survivors: &[0, 1, 2, 3],
                    parents: &[1],
                    ids: NewIds::Next(1),
                    source_of,
                    generation: population.generation(),
                    zero: None,
                    ids_into: None,
                },
                &ScopedThreads::available(),
            )
        };
        let e = reorder(&|m| (m == wide_id).then_some(narrow_id)).unwrap_err();
        assert!(
            matches!(&e, Error::InvalidLifecycle { reason, .. } if reason.contains("`narrow`")),
            "{e}"
        );
        assert_eq!(set.size(), 4, "nothing moved");
        // A source of the same shape is taken.
        reorder(&|m| (m == narrow_id).then_some(narrow_id)).unwrap();
        assert_eq!(set.size(), 5);
        assert_eq!(x.data_ro().to_vec(), [1.0, 2.0, 3.0, 4.0, 2.0]);
    }
}
