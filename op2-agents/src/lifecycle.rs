//! Births and deaths (FLAME GPU's agent death and agent output): a kernel
//! given `life(FATE)` gets a [`Fate`] and may kill its agent and have one
//! child; after the loop the dynamic set is compacted and the children
//! appended, in every Dat of the set at once.

use std::any::Any;
use std::sync::{Arc, Mutex};

use op2_core::agent_support::select_indices;
use op2_core::agent_support::{identity_order, DeviceReorder, NewIds, Population, Reorder};
use op2_core::agent_support::{stage, OVERWRITE, READ, UPDATE};
use op2_core::{
    scratch_buffer, ArgData, Dat, DatHandle, DeviceBuffer, DeviceWork, Error, FatesLeft, GatherJob, Result, Scalar,
    ScopedThreads, SelectJob, Set, Workers,
};

pub use op2_core::{FATE_DIES, FATE_SPAWNS};

/// What a kernel decides for its agent this loop: nothing (it lives on,
/// childless), [`Fate::die`], [`Fate::spawn`], or both (the agent is
/// replaced by its child). A kernel parameter `fate: &mut Fate`, passed
/// as `life(FATE)` with a [`Lifecycle`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fate {
    flags: i32,
}

impl Fate {
    /// A fate with nothing decided (what every call starts from).
    pub fn new() -> Fate {
        Fate { flags: 0 }
    }

    /// The agent dies after this loop.
    pub fn die(&mut self) {
        self.flags |= FATE_DIES;
    }

    /// The agent has one child after this loop (a second call changes
    /// nothing: at most one child per call). The child's values are those
    /// the kernel writes to the [`Lifecycle::offspring`] Dats; in Dats
    /// without one it copies its parent.
    pub fn spawn(&mut self) {
        self.flags |= FATE_SPAWNS;
    }

    /// The flags as stored ([`FATE_DIES`], [`FATE_SPAWNS`]).
    pub fn flags(&self) -> i32 {
        self.flags
    }
}

/// What one [`Lifecycle::apply`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Census {
    /// Agents before.
    pub before: usize,
    /// Agents that died.
    pub deaths: usize,
    /// Children born.
    pub births: usize,
    /// Agents after: `before - deaths + births`.
    pub after: usize,
}

/// A Dat of the set and the Dat its children's values come from.
struct Offspring {
    dat: usize,
    offspring: usize,
    handle: Box<dyn Any + Send + Sync>,
}

/// Births and deaths of a dynamic set ([`Set::dynamic`]): a `fates` Dat
/// (one flag word per agent) that loops given `life(FATE)` write through a
/// `&mut Fate` parameter, the Dats children take their values from
/// ([`Lifecycle::offspring`]), and the compaction that applies the fates
/// after each such loop (`par_loop!` calls [`Lifecycle::apply`] when the
/// loop succeeded).
///
/// Applying keeps the survivors in order and appends one child per
/// spawning agent in its parent's order, in every Dat of the set (scan and
/// scatter); survivors keep their global ids and children get the next
/// ones in the order of their parents' ids, so ids never repeat and depend
/// neither on the backend, the thread count, nor where agents sit in
/// memory; across processes a [`BirthNumbering`](op2_core::BirthNumbering)
/// makes them independent of the process count too. Capacity doubles when
/// the set outgrows it.
/// Afterwards maps, ragged maps and subsets made for the old numbering are
/// refused until rebuilt. On a device runtime (`apply_on(&rt)`, as
/// `par_loop!` calls it) the compaction runs in device memory and the Dats
/// stay there: only the counts of deaths and births (and, when some died,
/// the survivors' indices, for the ids) come back to the host. Elsewhere
/// it runs on the host's threads.
///
/// A cheap cloneable handle.
#[derive(Clone)]
pub struct Lifecycle(Arc<LifeInner>);

struct LifeInner {
    set: Set,
    fates: Dat<i32>,
    ids: Dat<i64>,
    offspring: Mutex<Vec<Offspring>>,
    scratch: Mutex<HostScratch>,
    device_scratch: Mutex<DeviceScratch>,
    last: Mutex<Census>,
    /// Whether loops leave their fates for an explicit apply
    /// ([`Lifecycle::hold_fates`]).
    held: std::sync::atomic::AtomicBool,
}

/// The survivors, parents and children's ids on the host, kept between
/// applies.
#[derive(Default)]
struct HostScratch {
    survivors: Vec<u32>,
    parents: Vec<u32>,
    children: Vec<u64>,
}

/// The survivors and parents on a device (and their copies on the host),
/// kept between applies.
#[derive(Default)]
struct DeviceScratch {
    survivors: Option<Box<dyn DeviceBuffer>>,
    parents: Option<Box<dyn DeviceBuffer>>,
    /// Children's ids and the order `0, 1, ...`, uploaded when the ids
    /// are not consecutive.
    children: Option<Box<dyn DeviceBuffer>>,
    identity: Option<Box<dyn DeviceBuffer>>,
    host: HostScratch,
}

impl Lifecycle {
    /// The births and deaths of `set`. A set has one Lifecycle at a time
    /// (clone the handle to share it): a second would apply its fates to
    /// the children the first made.
    ///
    /// # Errors
    /// [`Error::InvalidLifecycle`] if `set` is not dynamic, or already has
    /// a Lifecycle that is still in use.
    pub fn new(set: &Set) -> Result<Lifecycle> {
        let Some(population) = set.population() else {
            return Err(Error::InvalidLifecycle {
                set: set.name().to_string(),
                reason: "births and deaths need a dynamic set: make it with `Set::dynamic`".to_string(),
            });
        };
        let refuse = || Error::InvalidLifecycle {
            set: set.name().to_string(),
            reason: "the set already has a Lifecycle; use that one (its handle clones), since two would each apply \
                     their fates to the children of the other"
                .to_string(),
        };
        population
            .adopt_lifecycle(|| Lifecycle::make(set), refuse)
            .map(Lifecycle)
    }

    fn make(set: &Set) -> Result<Arc<LifeInner>> {
        Ok(Arc::new(LifeInner {
            set: set.clone(),
            fates: Dat::zeros(format!("{}.fates", set.name()), set, 1)?,
            ids: Dat::from_vec(
                format!("{}.ids", set.name()),
                set,
                1,
                set.try_global_ids()?.iter().map(|&id| id as i64).collect(),
            )?,
            offspring: Mutex::new(Vec::new()),
            scratch: Mutex::new(HostScratch::default()),
            device_scratch: Mutex::new(DeviceScratch::default()),
            last: Mutex::new(Census::default()),
            held: std::sync::atomic::AtomicBool::new(false),
        }))
    }

    /// The set.
    pub fn set(&self) -> &Set {
        &self.0.set
    }

    /// The flags kernels write (what `life(FATE)` passes): 0 between loops.
    pub fn fates(&self) -> &Dat<i32> {
        &self.0.fates
    }

    /// The agents' global ids as a Dat (their bits as `i64`), kept current
    /// by [`Lifecycle::apply`]: what a kernel reads to know which agent it
    /// is (to break ties by id, or to tell its own message from others').
    pub fn ids(&self) -> &Dat<i64> {
        &self.0.ids
    }

    /// The Dat a child's value of `dat` comes from: a Dat of the set that a
    /// kernel writes (WRITE) for its child when it spawns. Asking twice
    /// returns the same Dat.
    ///
    /// # Errors
    /// [`Error::InvalidLifecycle`] if `dat` is not on the set.
    pub fn offspring<T: Scalar>(&self, dat: &Dat<T>) -> Result<Dat<T>> {
        if !dat.set().same(&self.0.set) {
            return Err(Error::InvalidLifecycle {
                set: self.0.set.name().to_string(),
                reason: format!("`{}` is on set `{}`, not on this one", dat.name(), dat.set().name()),
            });
        }
        let mut offspring = self.0.offspring.lock().unwrap_or_else(|p| p.into_inner());
        let id = DatHandle::id(dat);
        if let Some(o) = offspring.iter().find(|o| o.dat == id) {
            if let Some(d) = o.handle.downcast_ref::<Dat<T>>() {
                return Ok(d.clone());
            }
        }
        let child = Dat::zeros(format!("{}.child", dat.name()), &self.0.set, dat.dim())?;
        offspring.push(Offspring {
            dat: id,
            offspring: DatHandle::id(&child),
            handle: Box::new(child.clone()),
        });
        Ok(child)
    }

    /// Applies the fates the last loop wrote: the dead leave, children are
    /// appended, every Dat of the set follows, and the fates are 0 again.
    /// When nobody died and nobody was born nothing moves (Dats on a device
    /// stay there). `par_loop!` calls this after a loop given `life(FATE)`.
    ///
    /// # Errors
    /// [`Error::SetInUse`] if a loop over the set is running;
    /// [`Error::HostBorrow`] naming a Dat of the set that is borrowed;
    /// [`Error::SetTooLarge`], [`Error::HostOutOfMemory`],
    /// [`Error::Transfer`]; across processes (a [`BirthNumbering`](op2_core::BirthNumbering)
    /// installed), [`Error::Mpi`] naming the process that failed. On error
    /// nothing has changed, except across processes: there every process
    /// numbers each round, so an error uses the round up (the fates are
    /// forgotten and the next id moves past the round's ids) on every
    /// process alike.
    pub fn apply(&self) -> Result<Census> {
        self.apply_on(&ScopedThreads::available())
    }

    /// As [`Lifecycle::apply`], on `workers` (a runtime, `&rt`, lends its
    /// backend's threads; `par_loop!` passes its runtime).
    ///
    /// # Errors
    /// As [`Lifecycle::apply`].
    pub fn apply_on(&self, workers: &dyn Workers) -> Result<Census> {
        let result = match workers.device_work() {
            Some(work) => self.apply_on_device(work),
            None => self.apply_on_host(workers),
        };
        // Across processes a failed round is used up everywhere: no
        // process keeps fates that the others forgot.
        if result.is_err() && self.population().numbers_across_processes() {
            self.discard_local();
        }
        result
    }

    /// Makes the loops that write fates leave them for an explicit
    /// [`Lifecycle::apply_on`] (`true`), or apply them as they end (`false`,
    /// the default): to read what a loop wrote for its agents (the model
    /// layer's children of another type) before the dying ones leave.
    pub fn hold_fates(&self, hold: bool) {
        self.0.held.store(hold, std::sync::atomic::Ordering::Relaxed);
    }

    /// What `par_loop!` calls after loop `loop_name` ran: as
    /// [`Lifecycle::apply_on`], its error wrapped in
    /// [`Error::FatesNotApplied`], which says that the kernel ran and
    /// whether the fates wait for another apply.
    #[doc(hidden)]
    pub fn apply_after_loop(&self, loop_name: &str, workers: &dyn Workers) -> Result<Census> {
        if self.0.held.load(std::sync::atomic::Ordering::Relaxed) {
            return Ok(Census::default());
        }
        let population = self.population();
        let generation = population.generation();
        self.apply_on(workers).map_err(|e| Error::FatesNotApplied {
            loop_name: loop_name.to_string(),
            set: self.0.set.name().to_string(),
            fates: if population.generation() != generation {
                FatesLeft::Applied
            } else if population.numbers_across_processes() {
                FatesLeft::Discarded
            } else {
                FatesLeft::Kept
            },
            source: Box::new(e),
        })
    }

    /// [`Lifecycle::apply_on`] on the host's threads.
    fn apply_on_host(&self, workers: &dyn Workers) -> Result<Census> {
        let inner = &*self.0;
        let population = self.population();
        let mut scratch = inner.scratch.lock().unwrap_or_else(|p| p.into_inner());
        let HostScratch {
            survivors,
            parents,
            children,
        } = &mut *scratch;
        // Read first: a change after it is refused at the reorder.
        let generation = population.generation();
        let before = inner.set.size();
        let selected = inner.fates.try_data_ro().map(|fates| {
            let fates = &*fates;
            select_indices(before, &|e| fates[e] & FATE_DIES == 0, survivors, workers);
            select_indices(before, &|e| fates[e] & FATE_SPAWNS != 0, parents, workers);
        });
        let selected = selected.and_then(|()| self.check_ready());
        // Numbering may be collective: taken part in even after a failure.
        let numbered = population.number_children(inner.set.name(), selected.is_ok().then_some(&parents[..]), children);
        selected?;
        let next = numbered?;
        let census = Census {
            before,
            deaths: before - survivors.len(),
            births: parents.len(),
            after: survivors.len() + parents.len(),
        };
        if census.deaths > 0 || census.births > 0 {
            let pairs = self.offspring_pairs();
            let source_of = |id: usize| pairs.iter().find(|(d, _)| *d == id).map(|&(_, o)| o);
            let reordered = population.reorder(
                inner.set.name(),
                &Reorder {
                    survivors,
                    parents,
                    ids: NewIds::Given { ids: children, next },
                    source_of: &source_of,
                    generation,
                    // Children copied their parents' flags and ids: the
                    // fates are cleared and the ids written while the set
                    // is still held, so nothing is left half done.
                    zero: Some(DatHandle::id(&inner.fates)),
                    ids_into: Some(DatHandle::id(&inner.ids)),
                },
                workers,
            );
            if let Err(e) = reordered {
                population.numbering_failed(next);
                return Err(e);
            }
        } else {
            population.set_next_id(next);
        }
        *inner.last.lock().unwrap_or_else(|p| p.into_inner()) = census;
        Ok(census)
    }

    /// Across processes, whether the set can change now (no Dat of it
    /// borrowed, no loop holding it), checked before the collective
    /// numbering so that a local failure is reported to every process
    /// instead of coming after it. Alone, the change itself finds out.
    fn check_ready(&self) -> Result<()> {
        let population = self.population();
        match population.numbers_across_processes() {
            true => population.check_changeable(self.0.set.name()),
            false => Ok(()),
        }
    }

    fn population(&self) -> &Population {
        match self.0.set.population() {
            Some(p) => p,
            None => unreachable!("Lifecycle::new accepts dynamic sets only"),
        }
    }

    /// [`Lifecycle::apply_on`] in `work`'s device memory: the fates read
    /// there by two stable selections (survivors, parents), and the set
    /// reordered there; the fates are zeroed and the children's ids
    /// written there too.
    fn apply_on_device(&self, work: &dyn DeviceWork) -> Result<Census> {
        let inner = &*self.0;
        let population = self.population();
        let mut guard = inner.device_scratch.lock().unwrap_or_else(|p| p.into_inner());
        let DeviceScratch {
            survivors,
            parents,
            children: children_buffer,
            identity,
            host,
        } = &mut *guard;
        // Read first: a change after it is refused at the reorder.
        let generation = population.generation();
        let before = inner.set.size();
        let selected = select_on_device(work, &inner.fates, before, survivors, parents)
            .and_then(|s| self.check_ready().map(|()| s));
        // The parents come to the host only when their ids decide the
        // children's: across processes, or with ids out of index order.
        let across = population.numbers_across_processes();
        let sorted = !population.ids_ascend();
        let HostScratch {
            survivors: survivors_host,
            parents: parents_host,
            children,
        } = host;
        let parents_known = match &selected {
            Ok((_, births, _, parents)) if across || sorted => {
                parents_host.resize(*births, 0);
                parents.download(bytemuck::cast_slice_mut(parents_host)).map(|()| true)
            }
            Ok(_) => Ok(false),
            Err(_) => Ok(false),
        };
        let numbered = match (&selected, &parents_known) {
            (Ok(_), Ok(true)) => population
                .number_children(inner.set.name(), Some(parents_host), children)
                .map(Some),
            (Ok(_), Ok(false)) => Ok(None),
            // Take part in a numbering across processes, then report.
            _ => population.number_children(inner.set.name(), None, children).map(Some),
        };
        let (kept, births, survivors, parents) = selected?;
        parents_known?;
        let numbered = numbered?;
        if numbered.is_none() {
            // Consecutive ids the device writes itself: the same limit.
            population.check_ids_left(inner.set.name(), births)?;
        }
        let census = Census {
            before,
            deaths: before - kept,
            births,
            after: kept + births,
        };
        if census.deaths == 0 && census.births == 0 {
            if let Some(next) = numbered {
                population.set_next_id(next);
            }
            *inner.last.lock().unwrap_or_else(|p| p.into_inner()) = census;
            return Ok(census);
        }
        // The ids are renumbered on the host, from the survivors.
        let survivors_host = if census.deaths > 0 {
            survivors_host.resize(kept, 0);
            if let Err(e) = survivors.download(bytemuck::cast_slice_mut(survivors_host)) {
                if let Some(next) = numbered {
                    population.numbering_failed(next);
                }
                return Err(e);
            }
            Some(&survivors_host[..])
        } else {
            None
        };
        let first_id = population.next_id();
        let ids = match numbered {
            Some(next) => NewIds::Given { ids: children, next },
            None => NewIds::Next(births),
        };
        // Consecutive ids are written by the device itself; others are
        // uploaded (one per child) and gathered into place.
        let consecutive = match ids {
            NewIds::Next(_) => true,
            NewIds::Given { ids, .. } => ids.iter().enumerate().all(|(k, &id)| id == first_id + k as u64),
        };
        let pairs = self.offspring_pairs();
        let source_of = |id: usize| pairs.iter().find(|(d, _)| *d == id).map(|&(_, o)| o);
        let reordered = population.reorder_on_device(
            inner.set.name(),
            &DeviceReorder {
                survivors,
                kept,
                survivors_host,
                parents,
                births,
                ids,
                source_of: &source_of,
                generation,
            },
            work,
        );
        if let Err(e) = reordered {
            if let Some(next) = numbered {
                population.numbering_failed(next);
            }
            return Err(e);
        }
        // Children copied their parents' flags and ids: no fate is
        // pending, and the children get their own ids.
        let mut finish = || -> Result<()> {
            let fates = stage(work, ArgData::Dat(&inner.fates), OVERWRITE, 0)?;
            work.fill_zero(fates.buffer(), census.after)?;
            let ids = stage(work, ArgData::Dat(&inner.ids), UPDATE, 0)?;
            if consecutive {
                return work.fill_ids(ids.buffer(), kept, births, first_id);
            }
            let given = scratch_buffer(work, children_buffer, "children's ids", 8 * births)?;
            given.upload(bytemuck::cast_slice(children))?;
            let order = identity_order(work, identity, births)?;
            work.gather(&GatherJob {
                n: births,
                words: 2,
                order,
                src: given,
                dst: ids.buffer(),
                dst_first: kept,
                tail: None,
            })
        };
        if let Err(e) = finish() {
            // The set has changed: make the fates and ids right on the
            // host, so that no child spawns again, then report.
            self.discard_local();
            if let Ok(mut ids) = inner.ids.try_data_mut() {
                // The first error is the one to report.
                let _ = population.copy_ids(&mut ids);
            }
            *inner.last.lock().unwrap_or_else(|p| p.into_inner()) = census;
            return Err(e);
        }
        *inner.last.lock().unwrap_or_else(|p| p.into_inner()) = census;
        Ok(census)
    }

    /// Each Dat with an offspring Dat, and it (by id).
    fn offspring_pairs(&self) -> Vec<(usize, usize)> {
        self.0
            .offspring
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|o| (o.dat, o.offspring))
            .collect()
    }

    /// Forgets the fates a failed loop may have written (so a later apply
    /// cannot act on them). `par_loop!` calls this when a loop given
    /// `life(FATE)` returns an error. Across processes (a
    /// [`BirthNumbering`](op2_core::BirthNumbering) installed) it is
    /// collective like [`Lifecycle::apply`], taking part in the round as
    /// failed: call it where the other processes apply or discard.
    pub fn discard(&self) {
        self.discard_local();
        // Held fates are numbered, or discarded, by the holder's own apply
        // or discard once it lets go: no round here.
        if self.0.held.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let population = self.population();
        if population.numbers_across_processes() {
            // Every process numbers each round: this one takes part as
            // failed, so that the others stop instead of waiting.
            let mut none = Vec::new();
            if let Ok(next) = population.number_children(self.0.set.name(), None, &mut none) {
                population.set_next_id(next);
            }
        }
    }

    /// Zeroes the fates.
    fn discard_local(&self) {
        if let Ok(mut f) = self.0.fates.try_data_mut() {
            f.fill(0);
        }
    }

    /// What the last [`Lifecycle::apply`] did.
    pub fn last_census(&self) -> Census {
        *self.0.last.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The survivors (not dying) and parents (spawning) among `before`
/// agents, selected by their `fates` on the device; returns their counts
/// and the buffers holding them.
fn select_on_device<'b>(
    work: &dyn DeviceWork,
    fates: &Dat<i32>,
    before: usize,
    survivors: &'b mut Option<Box<dyn DeviceBuffer>>,
    parents: &'b mut Option<Box<dyn DeviceBuffer>>,
) -> Result<(usize, usize, &'b dyn DeviceBuffer, &'b dyn DeviceBuffer)> {
    let survivors = scratch_buffer(work, survivors, "survivors", 4 * before)?;
    let parents = scratch_buffer(work, parents, "parents", 4 * before)?;
    let fates = stage(work, ArgData::Dat(fates), READ, 0)?;
    let select = |mask, when_set, out| {
        work.select(&SelectJob {
            n: before,
            flags: Some(fates.buffer()),
            mask,
            when_set,
            out,
        })
    };
    let kept = select(FATE_DIES, false, survivors)?;
    let births = select(FATE_SPAWNS, true, parents)?;
    Ok((kept, births, survivors, parents))
}

impl std::fmt::Debug for Lifecycle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lifecycle").field("set", &self.0.set.name()).finish()
    }
}
