//! Distributing a mesh built on every rank: partition the primary set with
//! METIS (on the graph [`dual_graph`](crate::dual_graph) builds), derive the
//! other sets' owners ([`derive_owners`](crate::derive_owners)), lay out each
//! rank's elements ([`rank_layout`](crate::rank_layout)), and hand out local
//! Sets (whose halos `halo_exchange.rs` exchanges), Maps and Dats; gather Dats
//! back to rank 0.

use std::collections::HashMap;
use std::sync::Arc;

use mpi::traits::*;
use op2_core::{Dat, Error, Map, RaggedMap, Result, Scalar, Set, Stencil};

use crate::halo_exchange::{Comm, SetComm};
use crate::halo_layout::no_rows_into_nothing;
use crate::{
    derive_owners, dual_graph, local_map, local_ragged, neighbours, rank_layout, MapDesc, MeshDesc, Mpi, Partitioner,
    RankLayout,
};

impl Mpi {
    /// Distributes a mesh that every rank built identically: `sets` and the
    /// `maps` between them, partitioned by `primary` (with METIS on more than
    /// one rank). Fails if a map joins a set not given, or a rank would own no
    /// element of the primary set.
    pub fn distribute(&self, sets: &[&Set], maps: &[&Map], primary: &Set) -> Result<Distributed> {
        self.distribute_graph(sets, maps, &[], primary)
    }

    /// [`Mpi::distribute`] with ragged maps too (agents on a graph): a
    /// ragged map from the primary set to itself is the graph METIS cuts;
    /// every rank gets, for its owned and exec-halo elements, their targets
    /// renumbered locally, and the halos hold every target they read.
    pub fn distribute_graph(
        &self,
        sets: &[&Set],
        maps: &[&Map],
        ragged: &[&RaggedMap],
        primary: &Set,
    ) -> Result<Distributed> {
        self.distribute_with(sets, maps, ragged, primary, &Partitioner::Metis)
    }

    /// [`Mpi::distribute_graph`] with the primary set cut by `partitioner`
    /// instead of METIS: strips of whole rows for a lattice
    /// ([`Partitioner::Blocks`], which keeps a [`Stencil`] computed through
    /// [`Distributed::stencil`]), or owners of your own.
    pub fn distribute_with(
        &self,
        sets: &[&Set],
        maps: &[&Map],
        ragged: &[&RaggedMap],
        primary: &Set,
        partitioner: &Partitioner,
    ) -> Result<Distributed> {
        // Checked on every rank, then agreed: a rank that failed alone, or
        // whose mesh or partitioner differs, would leave the others waiting
        // in the partitioner's broadcast or exchanging halos that do not fit.
        let described = (|| -> Result<(MeshDesc<'_>, usize)> {
            for s in sets {
                s.check_narrow("distribution over MPI ranks")?;
            }
            let index = |s: &Set, what: &str| {
                sets.iter().position(|x| x.same(s)).ok_or_else(|| Error::Mpi {
                    reason: format!("{what} `{}` is not among the sets given to distribute", s.name()),
                })
            };
            let p = index(primary, "primary set")?;
            let mut descs = Vec::with_capacity(maps.len());
            for m in maps {
                descs.push(MapDesc {
                    from: index(m.from_set(), &format!("map `{}` starts from set", m.name()))?,
                    to: index(m.to_set(), &format!("map `{}` points into set", m.name()))?,
                    arity: m.arity(),
                    values: m.narrow_values("distribution over MPI ranks")?,
                    offsets: None,
                });
            }
            for r in ragged {
                descs.push(MapDesc {
                    from: index(r.from_set(), &format!("ragged map `{}` starts from set", r.name()))?,
                    to: index(r.to_set(), &format!("ragged map `{}` points into set", r.name()))?,
                    arity: 0,
                    values: r.targets(),
                    offsets: Some(r.offsets()),
                });
            }
            let mesh = MeshDesc {
                set_sizes: sets.iter().map(|s| s.size()).collect(),
                maps: descs,
            };
            Ok((mesh, p))
        })();
        let shape = match &described {
            Ok((mesh, p)) => mesh_shape(mesh, *p, partitioner),
            // Not compared: a failure is agreed first.
            Err(_) => String::new(),
        };
        let (mesh, p) = crate::all_to_all::agreed(&self.comm.0, described, Some(("meshes to distribute", &shape)))?;
        let nranks = self.size() as u32;
        let empty_rank = |rank: usize| Error::Mpi {
            reason: format!(
                "rank {rank} would own no element of `{}` ({} over {}); run on fewer ranks",
                primary.name(),
                op2_core::plural(primary.size(), "element", "elements"),
                op2_core::plural(nranks as usize, "rank", "ranks")
            ),
        };
        if primary.size() < nranks as usize {
            return Err(empty_rank(primary.size()));
        }
        let part = match partitioner.fixed_owners(primary.size(), nranks) {
            None => self.partition(&mesh, p)?,
            Some(owners) => owners.map_err(|reason| Error::Mpi {
                reason: format!("partitioning `{}`: {reason}", primary.name()),
            })?,
        };
        let mut owned = vec![0usize; nranks as usize];
        for &r in &part {
            owned[r as usize] += 1;
        }
        if let Some(empty) = owned.iter().position(|&n| n == 0) {
            return Err(empty_rank(empty));
        }
        let owners = derive_owners(&mesh, p, part, nranks);
        let layouts: Vec<RankLayout> = (0..nranks).map(|r| rank_layout(&mesh, &owners, r)).collect();
        let me = self.rank() as u32;
        // A rank may fail here alone (its own layout); every rank returns
        // the failure rather than leave the others in a later exchange.
        let local = (|| -> Result<LocalCarriers> {
            let mut local_sets = Vec::with_capacity(sets.len());
            for (k, s) in sets.iter().enumerate() {
                let comm = SetComm::new(self.comm.clone(), neighbours(&layouts, k, me), k as i32);
                // Elements keep their global ids (the given ones, else their
                // index in the global set) through distribution.
                let layout = &layouts[me as usize].sets[k];
                let global_ids = s.global_ids();
                let ids = layout.globals.iter().map(|&g| global_ids[g as usize]).collect();
                local_sets.push(Set::distributed_with_global_ids(
                    s.name(),
                    layout.regions,
                    Arc::new(comm),
                    ids,
                )?);
            }
            let g2l: Vec<Vec<i32>> = (0..sets.len())
                .map(|k| layouts[me as usize].sets[k].global_to_local(mesh.set_sizes[k]))
                .collect();
            let mut local_maps = HashMap::new();
            for (m, d) in maps.iter().zip(&mesh.maps) {
                let layout = &layouts[me as usize];
                let (from, to) = (&layout.sets[d.from], &layout.sets[d.to]);
                no_rows_into_nothing(m.name(), me, (from, sets[d.from].name()), (to, sets[d.to].name()))?;
                let values = local_map(d, &layouts[me as usize].sets[d.from], &g2l[d.to]);
                let local = Map::new(m.name(), &local_sets[d.from], &local_sets[d.to], d.arity, values)?;
                local_maps.insert(m.id(), local);
            }
            let mut local_ragged_maps = HashMap::new();
            for (r, d) in ragged.iter().zip(&mesh.maps[maps.len()..]) {
                let (offsets, targets) = local_ragged(d, &layouts[me as usize].sets[d.from], &g2l[d.to]);
                let local = RaggedMap::new(r.name(), &local_sets[d.from], &local_sets[d.to], offsets, targets)?;
                local_ragged_maps.insert(r.id(), local);
            }
            Ok((local_sets, local_maps, local_ragged_maps))
        })();
        let (local_sets, local_maps, local_ragged_maps) = crate::all_to_all::agreed(&self.comm.0, local, None)?;
        Ok(Distributed {
            comm: self.comm.clone(),
            global_sets: sets.iter().map(|s| (*s).clone()).collect(),
            local_sets,
            local_maps,
            local_ragged_maps,
            layouts,
            rank: me as usize,
        })
    }

    /// The primary set's owner ranks: METIS on rank 0, broadcast to all.
    fn partition(&self, mesh: &MeshDesc<'_>, primary: usize) -> Result<Vec<u32>> {
        let n = mesh.set_sizes[primary];
        let nranks = self.size();
        if nranks == 1 {
            return Ok(vec![0; n]);
        }
        let mut part = vec![0i32; n];
        let mut status = [0i32; 1];
        // Only rank 0 knows why it failed; the others report that it did.
        let mut failure = String::from("rank 0 could not partition it");
        if self.rank() == 0 {
            // The description comes from validated Sets and Maps; an error
            // here (a graph beyond i32 entries) fails the partition.
            match dual_graph(mesh, primary) {
                Err(e) => {
                    status[0] = 1;
                    failure = e.to_string();
                }
                Ok(Some((xadj, adjncy))) => {
                    // An element weighs 1 + its neighbours in the graph: a
                    // loop's work grows with the entries it reads, and on
                    // scale-free graphs (hubs of thousands of neighbours)
                    // equal element counts are far from equal work.
                    let weights: Vec<i32> = xadj.windows(2).map(|w| 1 + w[1] - w[0]).collect();
                    let result = metis::Graph::new(1, nranks as i32, &xadj, &adjncy)
                        .map(|g| g.set_vwgt(&weights))
                        .map_err(|e| e.to_string())
                        .and_then(|g| g.part_kway(&mut part).map_err(|e| format!("{e:?}")));
                    if let Err(e) = result {
                        status[0] = 1;
                        failure = format!("METIS failed: {e}");
                    }
                }
                Ok(None) => {
                    for (e, p) in part.iter_mut().enumerate() {
                        *p = crate::block_owner(e, n, nranks as u32) as i32;
                    }
                }
            }
        }
        let root = self.comm.0.process_at_rank(0);
        crate::waiting::broadcast_into(&root, &mut status[..]);
        if status[0] != 0 {
            return Err(Error::Mpi {
                reason: format!("partitioning the primary set: {failure}"),
            });
        }
        crate::waiting::broadcast_into(&root, &mut part[..]);
        Ok(part.into_iter().map(|r| r as u32).collect())
    }
}

/// A rank's local Sets, Maps and ragged maps (by the global ones' ids).
type LocalCarriers = (Vec<Set>, HashMap<u64, Map>, HashMap<u64, RaggedMap>);

/// What every rank must give `distribute_with` alike: the sets' sizes,
/// each map's sets, arity and values, the primary set and the partitioner
/// (digests of the values and owners).
fn mesh_shape(mesh: &MeshDesc<'_>, primary: usize, partitioner: &Partitioner) -> String {
    let digest = |values: &mut dyn Iterator<Item = u64>| {
        values.fold(0xcbf2_9ce4_8422_2325_u64, |h, v| (h ^ v).wrapping_mul(0x0100_0000_01b3))
    };
    let maps: Vec<String> = mesh
        .maps
        .iter()
        .map(|m| {
            let values = digest(&mut m.values.iter().map(|&v| v as u64));
            let offsets = m.offsets.map(|o| digest(&mut o.iter().map(|&v| v as u64)));
            format!("{}->{} x{} {values:x} {offsets:x?}", m.from, m.to, m.arity)
        })
        .collect();
    let partitioner = match partitioner {
        Partitioner::Metis => "metis".to_string(),
        Partitioner::Blocks { unit } => format!("blocks of {unit}"),
        Partitioner::Given(owners) => format!(
            "given {} {:x}",
            owners.len(),
            digest(&mut owners.iter().map(|&r| u64::from(r)))
        ),
    };
    format!(
        "sets {:?}, maps {maps:?}, primary {primary}, {partitioner}",
        mesh.set_sizes
    )
}

/// A distributed mesh: the local counterpart of every global carrier.
pub struct Distributed {
    comm: Arc<Comm>,
    global_sets: Vec<Set>,
    local_sets: Vec<Set>,
    local_maps: HashMap<u64, Map>,
    local_ragged_maps: HashMap<u64, RaggedMap>,
    layouts: Vec<RankLayout>,
    rank: usize,
}

impl Distributed {
    fn set_index(&self, global: &Set) -> Result<usize> {
        self.global_sets
            .iter()
            .position(|s| s.same(global))
            .ok_or_else(|| Error::Mpi {
                reason: format!("set `{}` was not distributed", global.name()),
            })
    }

    /// The layout of a local set, and the whole set's size.
    pub(crate) fn layout_of(&self, local: &Set) -> Result<(&crate::SetLayout, usize)> {
        let k = self
            .local_sets
            .iter()
            .position(|s| s.same(local))
            .ok_or_else(|| Error::Mpi {
                reason: format!("set `{}` is not a local set of this distributed mesh", local.name()),
            })?;
        Ok((&self.layouts[self.rank].sets[k], self.global_sets[k].size()))
    }

    /// The communicator the mesh was distributed over.
    pub(crate) fn comm(&self) -> &Comm {
        &self.comm
    }

    /// The local set of a global one.
    pub fn set(&self, global: &Set) -> Result<Set> {
        Ok(self.local_sets[self.set_index(global)?].clone())
    }

    /// The local map of a global one.
    pub fn map(&self, global: &Map) -> Result<Map> {
        self.local_maps.get(&global.id()).cloned().ok_or_else(|| Error::Mpi {
            reason: format!("map `{}` was not distributed", global.name()),
        })
    }

    /// The local stencil of a global one, still computed: this rank's
    /// elements of the lattice are whole rows when the lattice was cut with
    /// [`Partitioner::Blocks`] `{ unit: width }` (and the stencil's map was
    /// among the maps distributed, so that the halos hold its neighbours).
    ///
    /// # Errors
    /// [`Error::InvalidStencil`] if this rank holds part of a row (another
    /// partitioner; use [`Distributed::map`] of the stencil's map then) or a
    /// row whose neighbours the halos lack; [`Error::Mpi`] if the stencil's
    /// set was not distributed.
    pub fn stencil(&self, global: &Stencil) -> Result<Stencil> {
        let k = self.set_index(global.from_set())?;
        let layout = &self.layouts[self.rank].sets[k];
        let (width, height) = global.size();
        let mut rows = Vec::with_capacity(layout.globals.len() / width.max(1));
        for chunk in layout.globals.chunks(width.max(1)) {
            let first = chunk[0] as usize;
            let whole = chunk.len() == width
                && first % width == 0
                && chunk.iter().enumerate().all(|(i, &g)| g as usize == first + i);
            if !whole {
                return Err(Error::InvalidStencil {
                    stencil: global.name().to_string(),
                    reason: format!(
                        "rank {} holds part of a row of `{}` (element {first} onwards); cut the lattice into whole \
                         rows with `Partitioner::Blocks {{ unit: {width} }}`, or use the stencil's map",
                        self.rank,
                        global.from_set().name()
                    ),
                });
            }
            rows.push(first / width);
        }
        Stencil::torus_rows(
            global.name(),
            &self.local_sets[k],
            (width, height),
            global.offsets(),
            &rows,
        )
    }

    /// The local ragged map of a global one.
    pub fn ragged(&self, global: &RaggedMap) -> Result<RaggedMap> {
        self.local_ragged_maps
            .get(&global.id())
            .cloned()
            .ok_or_else(|| Error::Mpi {
                reason: format!("ragged map `{}` was not distributed", global.name()),
            })
    }

    /// The local Dat of a global one (owned and halo values, current).
    pub fn dat<T: Scalar>(&self, global: &Dat<T>) -> Result<Dat<T>> {
        let k = self.set_index(global.set())?;
        let layout = &self.layouts[self.rank].sets[k];
        let dim = global.dim();
        let all = global.data_ro();
        let values: Vec<T> = layout
            .globals
            .iter()
            .flat_map(|&g| all[g as usize * dim..(g as usize + 1) * dim].iter().copied())
            .collect();
        Dat::from_vec(global.name(), &self.local_sets[k], dim, values)
    }

    /// Every rank's owned values of `local` in global order, on rank 0
    /// (`None` on the others). Collective: every rank must call it, with
    /// the local Dat of the same global one; where a rank's Dat is not
    /// distributed, differs from another rank's in set, dim or type, or is
    /// too large to send, every rank returns the same `Err`.
    pub fn gather<T: Scalar>(&self, local: &Dat<T>) -> Result<Option<Vec<T>>> {
        let world = &self.comm.0;
        let found = self.local_sets.iter().position(|s| s.same(local.set()));
        let dim = local.dim();
        let elem = dim * std::mem::size_of::<T>();
        let mut out: Vec<T> = Vec::new();
        let check = match found {
            None => Err(Error::Mpi {
                reason: format!("gather: dat `{}` is not on a distributed set", local.name()),
            }),
            Some(k) => self.gather_room(k, local.name(), elem, &mut out),
        };
        // Every rank sends what rank 0 places by its own set, dim and type.
        let shape = format!("{found:?} {dim} {:?}", T::TYPE);
        crate::all_to_all::agree_shaped(world, check, "gathered dats (set, dim, type)", &shape)?;
        let Some(k) = found else {
            unreachable!("agreed: every rank found its set")
        };
        // A tag no halo exchange uses (theirs are set indices).
        let tag = self.local_sets.len() as i32;
        let mine = &self.layouts[self.rank].sets[k];
        let owned = bytemuck::cast_slice::<T, u8>(&local.try_data_ro()?[..mine.regions.owned_size() * dim]).to_vec();
        if self.rank != 0 {
            world.process_at_rank(0).send_with_tag(&owned[..], tag);
            return Ok(None);
        }
        let placed = bytemuck::cast_slice_mut::<T, u8>(&mut out);
        let mut place = |r: usize, bytes: &[u8]| -> Result<()> {
            let l = &self.layouts[r].sets[k];
            let globals = &l.globals[..l.regions.owned_size()];
            if bytes.len() != globals.len() * elem {
                return Err(Error::Mpi {
                    reason: format!(
                        "gather: rank {r} sent {} bytes of `{}` where it owns {} elements of {elem}",
                        bytes.len(),
                        local.name(),
                        globals.len()
                    ),
                });
            }
            for (value, &g) in bytes.chunks_exact(elem).zip(globals) {
                placed[g as usize * elem..(g as usize + 1) * elem].copy_from_slice(value);
            }
            Ok(())
        };
        place(0, &owned)?;
        for r in 1..self.layouts.len() {
            let (bytes, _status) = world.process_at_rank(r as i32).receive_vec_with_tag::<u8>(tag);
            place(r, &bytes)?;
        }
        Ok(Some(out))
    }

    /// That this rank can send its owned values of set `k` (`elem` bytes
    /// an element: an MPI count is an `i32`), and on rank 0 room for every
    /// rank's in `out`.
    fn gather_room<T: Scalar>(&self, k: usize, name: &str, elem: usize, out: &mut Vec<T>) -> Result<()> {
        let owned = self.layouts[self.rank].sets[k].regions.owned_size();
        if owned.saturating_mul(elem) > i32::MAX as usize {
            return Err(Error::Mpi {
                reason: format!(
                    "gather: dat `{name}`'s {owned} owned elements of {elem} bytes are more than one MPI message carries (2^31 - 1 bytes)"
                ),
            });
        }
        if self.rank == 0 {
            let n = self.global_sets[k]
                .size()
                .saturating_mul(elem / std::mem::size_of::<T>().max(1));
            out.try_reserve_exact(n).map_err(|_| Error::HostOutOfMemory {
                name: name.to_string(),
                bytes: n.saturating_mul(std::mem::size_of::<T>()),
            })?;
            out.resize(n, T::ZERO);
        }
        Ok(())
    }
}
