//! Births and deaths (FLAME GPU's agent death and agent output): a kernel
//! given `life(FATE)` gets a [`Fate`] and may kill its agent and have one
//! child; after the loop the dynamic set is compacted and the children
//! appended, in every Dat of the set at once.

use std::any::Any;
use std::sync::{Arc, Mutex};

use crate::device_work::{stage, OVERWRITE, READ, UPDATE};
use crate::population::{DeviceReorder, Reorder};
use crate::workers::select_indices;
use crate::{
    scratch_buffer, ArgData, Dat, DatHandle, DeviceBuffer, DeviceWork, Error, Result, Scalar, ScopedThreads, SelectJob,
    Set, Workers,
};

/// The flag a kernel sets to kill its agent.
pub const FATE_DIES: i32 = 1;
/// The flag a kernel sets to have one child.
pub const FATE_SPAWNS: i32 = 2;

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
/// ones in order, so ids never repeat and depend neither on the backend
/// nor on the thread count. Capacity doubles when the set outgrows it.
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
    scratch: Mutex<(Vec<u32>, Vec<u32>)>,
    device_scratch: Mutex<DeviceScratch>,
    last: Mutex<Census>,
}

/// The survivors and parents on a device, kept between applies.
#[derive(Default)]
struct DeviceScratch {
    survivors: Option<Box<dyn DeviceBuffer>>,
    parents: Option<Box<dyn DeviceBuffer>>,
    survivors_host: Vec<u32>,
}

impl Lifecycle {
    /// The births and deaths of `set`.
    ///
    /// # Errors
    /// [`Error::InvalidLifecycle`] if `set` is not dynamic.
    pub fn new(set: &Set) -> Result<Lifecycle> {
        if !set.is_dynamic() {
            return Err(Error::InvalidLifecycle {
                set: set.name().to_string(),
                reason: "births and deaths need a dynamic set: make it with `Set::dynamic`".to_string(),
            });
        }
        Ok(Lifecycle(Arc::new(LifeInner {
            set: set.clone(),
            fates: Dat::zeros(format!("{}.fates", set.name()), set, 1)?,
            ids: Dat::from_vec(
                format!("{}.ids", set.name()),
                set,
                1,
                set.global_ids().iter().map(|&id| id as i64).collect(),
            )?,
            offspring: Mutex::new(Vec::new()),
            scratch: Mutex::new((Vec::new(), Vec::new())),
            device_scratch: Mutex::new(DeviceScratch::default()),
            last: Mutex::new(Census::default()),
        })))
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
    /// [`Error::Transfer`]. On error nothing has changed.
    pub fn apply(&self) -> Result<Census> {
        self.apply_on(&ScopedThreads::available())
    }

    /// As [`Lifecycle::apply`], on `workers` (a runtime, `&rt`, lends its
    /// backend's threads; `par_loop!` passes its runtime).
    ///
    /// # Errors
    /// As [`Lifecycle::apply`].
    pub fn apply_on(&self, workers: &dyn Workers) -> Result<Census> {
        if let Some(work) = workers.device_work() {
            return self.apply_on_device(work);
        }
        let inner = &*self.0;
        let mut scratch = inner.scratch.lock().unwrap_or_else(|p| p.into_inner());
        let (survivors, parents) = &mut *scratch;
        let before = inner.set.size();
        {
            let fates = inner.fates.try_data_ro()?;
            let fates = &*fates;
            select_indices(before, &|e| fates[e] & FATE_DIES == 0, survivors, workers);
            select_indices(before, &|e| fates[e] & FATE_SPAWNS != 0, parents, workers);
        }
        let census = Census {
            before,
            deaths: before - survivors.len(),
            births: parents.len(),
            after: survivors.len() + parents.len(),
        };
        if census.deaths > 0 || census.births > 0 {
            let pairs = self.offspring_pairs();
            let source_of = |id: usize| pairs.iter().find(|(d, _)| *d == id).map(|&(_, o)| o);
            let Some(population) = inner.set.population() else {
                unreachable!("Lifecycle::new accepts dynamic sets only")
            };
            population.reorder(
                inner.set.name(),
                &Reorder {
                    survivors,
                    parents,
                    source_of: &source_of,
                },
                workers,
            )?;
            // Children copied their parents' flags; nothing is pending now.
            inner.fates.try_data_mut()?.fill(0);
            // And their parents' ids: write the new ones.
            population.copy_ids(&mut inner.ids.try_data_mut()?);
        }
        *inner.last.lock().unwrap_or_else(|p| p.into_inner()) = census;
        Ok(census)
    }

    /// [`Lifecycle::apply_on`] in `work`'s device memory: the fates read
    /// there by two stable selections (survivors, parents), and the set
    /// reordered there; the fates are zeroed and the children's ids
    /// written there too.
    fn apply_on_device(&self, work: &dyn DeviceWork) -> Result<Census> {
        let inner = &*self.0;
        let mut guard = inner.device_scratch.lock().unwrap_or_else(|p| p.into_inner());
        let DeviceScratch {
            survivors,
            parents,
            survivors_host,
        } = &mut *guard;
        let before = inner.set.size();
        let survivors = scratch_buffer(work, survivors, "survivors", 4 * before)?;
        let parents = scratch_buffer(work, parents, "parents", 4 * before)?;
        let (kept, births) = {
            let fates = stage(work, ArgData::Dat(&inner.fates), READ, 0)?;
            let select = |mask, when_set, out| {
                work.select(&SelectJob {
                    n: before,
                    flags: Some(fates.buffer()),
                    mask,
                    when_set,
                    out,
                })
            };
            (
                select(FATE_DIES, false, survivors)?,
                select(FATE_SPAWNS, true, parents)?,
            )
        };
        let census = Census {
            before,
            deaths: before - kept,
            births,
            after: kept + births,
        };
        if census.deaths > 0 || census.births > 0 {
            let Some(population) = inner.set.population() else {
                unreachable!("Lifecycle::new accepts dynamic sets only")
            };
            // The ids are renumbered on the host, from the survivors.
            let survivors_host = if census.deaths > 0 {
                survivors_host.resize(kept, 0);
                survivors.download(bytemuck::cast_slice_mut(survivors_host))?;
                Some(&survivors_host[..])
            } else {
                None
            };
            let first_id = population.next_id();
            let pairs = self.offspring_pairs();
            let source_of = |id: usize| pairs.iter().find(|(d, _)| *d == id).map(|&(_, o)| o);
            population.reorder_on_device(
                inner.set.name(),
                &DeviceReorder {
                    survivors,
                    kept,
                    survivors_host,
                    parents,
                    births,
                    source_of: &source_of,
                },
                work,
            )?;
            // Children copied their parents' flags and ids: no fate is
            // pending, and the children get their own ids.
            let finish = || -> Result<()> {
                let fates = stage(work, ArgData::Dat(&inner.fates), OVERWRITE, 0)?;
                work.fill_zero(fates.buffer(), census.after)?;
                let ids = stage(work, ArgData::Dat(&inner.ids), UPDATE, 0)?;
                work.fill_ids(ids.buffer(), kept, births, first_id)
            };
            if let Err(e) = finish() {
                // The set has changed: make the fates and ids right on the
                // host, so that no child spawns again, then report.
                self.discard();
                if let Ok(mut ids) = inner.ids.try_data_mut() {
                    population.copy_ids(&mut ids);
                }
                *inner.last.lock().unwrap_or_else(|p| p.into_inner()) = census;
                return Err(e);
            }
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
    /// `life(FATE)` returns an error.
    pub fn discard(&self) {
        if let Ok(mut f) = self.0.fates.try_data_mut() {
            f.fill(0);
        }
    }

    /// What the last [`Lifecycle::apply`] did.
    pub fn last_census(&self) -> Census {
        *self.0.last.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl std::fmt::Debug for Lifecycle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lifecycle").field("set", &self.0.set.name()).finish()
    }
}
