//! Distributing a mesh read in blocks ([`BlockMesh`]) without any rank ever
//! holding a whole set: the primary set is cut (PT-Scotch on its distributed
//! graph, or owners given), the other sets' owners follow through the maps
//! as in [`derive_owners`](crate::derive_owners), every row moves to its
//! owner, and each rank lays out its core / owned / exec halo / non-exec
//! halo elements and its halo exchange lists from what its neighbours tell
//! it. The rules, and so the layout for a given primary partition, are those
//! of the in-memory path (`partition.rs`); only the data never gathers.
//!
//! Questions about element `g` of a set ("who owns it?") go to the rank whose
//! block holds `g` (`all_to_all.rs`), so every table here is as long as what
//! a rank reads or owns plus its halos, never as long as a set.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use op2_core::{Dat, Error, Map, Result, Scalar, ScalarType, Set, SetRegions};

use crate::all_to_all::{agree, agree_shaped, ask_blocks, exchange, exchange_flat, starts};
use crate::block_mesh::{BlockDat, BlockMap, BlockSet};
use crate::halo_exchange::{Comm, SetComm};
use crate::{block_owner, block_rows, BlockMesh, Mpi, Neighbour, SetLayout};

/// How [`Mpi::distribute_blocks`] cuts the primary set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlockPartitioner {
    /// PT-Scotch on the primary set's graph (elements joined as for METIS on
    /// the in-memory path: see [`dual_graph`](crate::dual_graph)), built and
    /// cut in parallel.
    #[cfg(feature = "ptscotch")]
    PtScotch,
    /// PT-Scotch on the graph one named map gives, by the same rules (as
    /// OP2's `op_partition` takes a map): for Airfoil the map from edges to
    /// cells, so that cells sharing an edge are neighbours, a sparser graph
    /// than cells sharing a node, cut faster and with smaller halos.
    #[cfg(feature = "ptscotch")]
    PtScotchThrough(String),
    /// The blocks as read: rank `r` owns the `r`-th block of the primary set.
    FileOrder,
    /// The owner rank of each element of this rank's block of the primary
    /// set (so the in-memory path's partition can be given, for comparison).
    Given(Vec<u32>),
}

impl BlockPartitioner {
    /// What every rank must choose alike (a given partition's owners are
    /// each rank's own).
    fn kind(&self) -> String {
        match self {
            #[cfg(feature = "ptscotch")]
            BlockPartitioner::PtScotch => "PT-Scotch".to_string(),
            #[cfg(feature = "ptscotch")]
            BlockPartitioner::PtScotchThrough(map) => format!("PT-Scotch through `{map}`"),
            BlockPartitioner::FileOrder => "the file's order".to_string(),
            BlockPartitioner::Given(_) => "given owners".to_string(),
        }
    }
}

impl Default for BlockPartitioner {
    /// PT-Scotch when built with it, else the file's order.
    fn default() -> Self {
        #[cfg(feature = "ptscotch")]
        return BlockPartitioner::PtScotch;
        #[cfg(not(feature = "ptscotch"))]
        BlockPartitioner::FileOrder
    }
}

/// Elements of one set this rank owns, after migration, in global id order.
struct OwnedRows {
    gids: Vec<u32>,
}

/// One set's halo: elements, their owners, and (exec halo only) their maps'
/// rows and the owners of those rows' targets.
#[derive(Default)]
struct Halo {
    gids: Vec<u32>,
    owners: Vec<u32>,
}

impl Mpi {
    /// Distributes a mesh every rank read in blocks (see [`BlockMesh`]):
    /// cuts the set named `primary` with `partitioner`, moves every row to
    /// its owner and builds the local Sets (with their halos and exchange
    /// lists), Maps and Dats. No rank holds a whole set at any point.
    /// Collective; a mistake in any rank's input is an `Err` on every rank.
    pub fn distribute_blocks(
        &self,
        mesh: BlockMesh,
        primary: &str,
        partitioner: &BlockPartitioner,
    ) -> Result<BlockDistributed> {
        self.distribute_blocks_with(mesh, primary, partitioner, |_| Ok(()))
    }

    /// [`distribute_blocks`](Self::distribute_blocks), with this rank's
    /// blocks of the Dats added by `read_dats` after the cut: the
    /// partitioner's working memory is freed by then, so a rank never holds
    /// both (for Airfoil's 720K mesh on 4 ranks its peak drops by the Dats'
    /// blocks, about 9 MB of 50). `read_dats` adds Dats to the mesh as a
    /// reader does before the cut ([`BlockMesh::add_dat`], op2-hdf5's
    /// `block_dat`); every rank calls it at the same point, so a reader
    /// through MPI-IO may make collective calls, as long as it makes them
    /// on every rank, failing or not. Its `Err`, or a mistake it records
    /// with [`BlockMesh::refuse`], fails the distribution on every rank, and
    /// so do Dats that differ between ranks (names, sets, dims, types, or
    /// their order), as sets and maps that differ do.
    pub fn distribute_blocks_with(
        &self,
        mut mesh: BlockMesh,
        primary: &str,
        partitioner: &BlockPartitioner,
        read_dats: impl FnOnce(&mut BlockMesh) -> Result<()>,
    ) -> Result<BlockDistributed> {
        let comm = &self.comm.0;
        let (p, me) = (self.size() as u32, self.rank() as u32);
        let pi = mesh.set_index(primary);
        let checked = match (&mesh.error, pi) {
            (Some(reason), _) => Err(Error::Mpi { reason: reason.clone() }),
            _ if (mesh.rank, mesh.nranks) != (me, p) => Err(Error::Mpi {
                reason: format!(
                    "distributing from blocks: the mesh was read as rank {} of {}, but this is rank {me} of {p}",
                    mesh.rank, mesh.nranks
                ),
            }),
            (None, None) => Err(Error::Mpi {
                reason: format!("distributing from blocks: no set named `{primary}` (the primary set)"),
            }),
            (None, Some(_)) => Ok(()),
        };
        // The exchanges below follow the sets and maps: every rank must
        // have the same ones.
        // So must the primary set and the partitioner, which decide them.
        let shape = format!("{}, primary {primary}, {}", mesh.sets_and_maps(), partitioner.kind());
        agree_shaped(comm, checked, "sets, maps, primary set and partitioner", &shape)?;
        let pi = pi.expect("agreed");
        let n = mesh.sets[pi].size;
        let empty_rank = |rank: u64| Error::Mpi {
            reason: format!(
                "rank {rank} would own no element of `{primary}` ({} over {}); run on fewer ranks",
                op2_core::plural(n, "element", "elements"),
                op2_core::plural(p as usize, "rank", "ranks")
            ),
        };
        if n < p as usize {
            return Err(empty_rank(n as u64));
        }
        let my_block = block_rows(n, me, p);
        let (sets, maps) = (&mesh.sets, &mesh.maps);
        let part = match partitioner {
            BlockPartitioner::FileOrder => vec![me; my_block.len()],
            BlockPartitioner::Given(owners) => {
                let bad = if owners.len() != my_block.len() {
                    Some(format!(
                        "{} owners given for rows {my_block:?} of `{primary}`",
                        owners.len()
                    ))
                } else {
                    owners.iter().position(|&r| r >= p).map(|i| {
                        format!(
                            "element {} is given to rank {}, but there are {p}",
                            my_block.start + i,
                            owners[i]
                        )
                    })
                };
                agree(
                    comm,
                    bad.map_or(Ok(()), |reason| {
                        Err(Error::Mpi {
                            reason: format!("partitioning `{primary}`: {reason}"),
                        })
                    }),
                )?;
                owners.clone()
            }
            #[cfg(feature = "ptscotch")]
            BlockPartitioner::PtScotch | BlockPartitioner::PtScotchThrough(_) => match dual_graph_blocks(
                comm,
                sets,
                maps,
                pi,
                match partitioner {
                    BlockPartitioner::PtScotchThrough(name) => Some(name.as_str()),
                    _ => None,
                },
            )? {
                Some((xadj, adjncy)) => {
                    // What building the graph freed goes back before Scotch's
                    // working set comes on top.
                    crate::heap::release_freed();
                    // As METIS on the in-memory path: 1 + degree.
                    let weights: Vec<i64> = xadj.windows(2).map(|w| 1 + w[1] - w[0]).collect();
                    crate::ptscotch::part(comm, xadj, adjncy, weights)?
                }
                None => vec![me; my_block.len()],
            },
        };
        crate::heap::release_freed();
        // The Dats come in now, the partitioner's memory gone.
        let read = read_dats(&mut mesh).and_then(|()| match &mesh.error {
            Some(reason) => Err(Error::Mpi { reason: reason.clone() }),
            None => Ok(()),
        });
        // `read_dats` may have declared more than Dats.
        let shape = format!("{}, {}", mesh.sets_and_maps(), mesh.dats_shape());
        agree_shaped(comm, read, "sets, maps and Dats", &shape)?;
        let BlockMesh {
            sets,
            mut maps,
            mut dats,
            ..
        } = mesh;
        let mut counts = vec![0u64; p as usize];
        for &r in &part {
            counts[r as usize] += 1;
        }
        let mut totals = vec![0u64; p as usize];
        crate::waiting::all_reduce_into(comm, &counts[..], &mut totals[..], SystemOperation::sum());
        if let Some(r) = totals.iter().position(|&c| c == 0) {
            return Err(empty_rank(r as u64));
        }
        let owners = block_owners(comm, &sets, &maps, pi, part)?;
        crate::heap::release_freed();
        let ranks = Ranks { comm, me, p };
        // The blocks' tables move out, and are freed as they go.
        let mut moved = move_rows(&ranks, &sets, &mut maps, &mut dats, &owners)?;
        crate::heap::release_freed();
        let target_owners = find_target_owners(&ranks, &sets, &maps, &moved.rows, &owners)?;
        drop(owners);
        crate::heap::release_freed();
        let mut exec = exec_halos(&ranks, &maps, &moved, &target_owners)?;
        let order = local_order(&ranks, &maps, &moved.owned, &target_owners);
        let nonexec = nonexec_halos(&ranks, &maps, &moved, &target_owners, &exec)?;
        // What only the halos needed goes before the local tables are made.
        drop(target_owners);
        exec.target_owners = Vec::new();
        crate::heap::release_freed();
        // A rank may fail alone in its local tables: every rank returns the
        // failure before the Dats' halos are exchanged.
        let carriers = (|| {
            let local = self.local_sets(&sets, &moved.owned, &exec, &nonexec, &order)?;
            moved.owned = Vec::new();
            // Each local table is made while the rows it came from are freed:
            // trimming between them keeps the holes from adding up.
            crate::heap::release_freed();
            let local_maps = local_maps(
                &sets,
                &maps,
                std::mem::take(&mut moved.rows),
                &exec.rows,
                &order,
                &local,
                me,
            )?;
            Ok((local, local_maps))
        })();
        let (local, local_maps) = crate::all_to_all::agreed(comm, carriers, None)?;
        crate::heap::release_freed();
        let local_dats = local_dats(comm, &dats, moved.dat_rows, &order, &local)?;
        drop((order, exec, nonexec));
        let distributed = BlockDistributed {
            comm: self.comm.clone(),
            sets: sets
                .iter()
                .zip(local.sets)
                .map(|(s, l)| (s.name.clone(), s.size, l))
                .collect(),
            maps: local_maps,
            dats: local_dats,
            layouts: local.layouts,
            rank: me,
            nranks: p,
        };
        crate::heap::release_freed();
        Ok(distributed)
    }

    /// Layouts, exchange lists and local sets: owned elements in local
    /// order (core first), then the exec halo, then the non-exec halo.
    fn local_sets(
        &self,
        sets: &[BlockSet],
        owned: &[OwnedRows],
        exec: &ExecHalos,
        nonexec: &NonExecHalos,
        order: &LocalOrder,
    ) -> Result<LocalSets> {
        let (me, p) = (self.rank() as u32, self.size() as u32);
        let mut local = LocalSets {
            layouts: Vec::with_capacity(sets.len()),
            neighbours: Vec::with_capacity(sets.len()),
            sets: Vec::with_capacity(sets.len()),
        };
        for (s, set) in sets.iter().enumerate() {
            let (o, ex, nx) = (&owned[s], &exec.halos[s], &nonexec.halos[s]);
            let regions = SetRegions {
                core: order.cores[s],
                owned: o.gids.len() - order.cores[s],
                exec_halo: ex.gids.len(),
                nonexec_halo: nx.gids.len(),
            };
            let globals: Vec<u32> = order.order[s]
                .iter()
                .map(|&i| o.gids[i as usize])
                .chain(ex.gids.iter().copied())
                .chain(nx.gids.iter().copied())
                .collect();
            let set_owners: Vec<u32> = std::iter::repeat_n(me, o.gids.len())
                .chain(ex.owners.iter().copied())
                .chain(nx.owners.iter().copied())
                .collect();
            let layout = SetLayout {
                regions,
                globals,
                owners: set_owners,
            };
            let mut neighbours = Vec::new();
            for q in (0..p).filter(|&q| q != me) {
                let export: Vec<u32> = exec.exports[s][q as usize]
                    .iter()
                    .chain(&nonexec.exports[s][q as usize])
                    .map(|&i| order.local_of[s][i as usize])
                    .collect();
                let import = layout.imports_from(q);
                if !export.is_empty() || !import.0.is_empty() || !import.1.is_empty() {
                    neighbours.push(Neighbour {
                        rank: q,
                        import,
                        export,
                    });
                }
            }
            local.neighbours.push(neighbours.clone());
            let comm = SetComm::new(self.comm.clone(), neighbours, s as i32);
            let ids = layout.globals.iter().map(|&g| u64::from(g)).collect();
            local.sets.push(Set::distributed_with_global_ids(
                &set.name,
                regions,
                Arc::new(comm),
                ids,
            )?);
            local.layouts.push(layout);
        }
        Ok(local)
    }
}

/// The communicator and this rank's place in it.
struct Ranks<'c> {
    comm: &'c SimpleCommunicator,
    me: u32,
    p: u32,
}

/// What every rank owns after the rows moved: per set its elements'
/// global ids, per map and per Dat their rows, in global id order.
struct MovedRows {
    owned: Vec<OwnedRows>,
    rows: Vec<Vec<i32>>,
    dat_rows: Vec<Vec<u8>>,
}

/// Per set, the exec halo and, per rank, which owned elements (by index in
/// global id order) went to it; per map, the exec halo's rows and their
/// targets' owners.
struct ExecHalos {
    halos: Vec<Halo>,
    exports: Vec<Vec<Vec<u32>>>,
    rows: Vec<Vec<i32>>,
    target_owners: Vec<Vec<u32>>,
}

/// Per set, the non-exec halo and, per rank, the owned elements it asked
/// for.
struct NonExecHalos {
    halos: Vec<Halo>,
    exports: Vec<Vec<Vec<u32>>>,
}

/// Per set: the owned elements in local order (core first), how many are
/// core, and each owned element's local index.
struct LocalOrder {
    order: Vec<Vec<u32>>,
    cores: Vec<usize>,
    local_of: Vec<Vec<u32>>,
}

/// Per set: its layout, its neighbours and the local Set.
struct LocalSets {
    layouts: Vec<SetLayout>,
    neighbours: Vec<Vec<Neighbour>>,
    sets: Vec<Set>,
}

/// Every row to its owner: blocks arrive in rank order, each in row order,
/// so owned elements come in global id order. Each map's and Dat's block
/// is taken from it and freed once sent.
fn move_rows(
    r: &Ranks<'_>,
    sets: &[BlockSet],
    maps: &mut [BlockMap],
    dats: &mut [BlockDat],
    owners: &[Vec<u32>],
) -> Result<MovedRows> {
    let comm = r.comm;
    let owned: Vec<OwnedRows> = (0..sets.len())
        .map(|s| {
            let start = block_rows(sets[s].size, r.me, r.p).start as u32;
            let gids: Vec<u32> = (start..start + owners[s].len() as u32).collect();
            Ok(OwnedRows {
                gids: migrate(comm, &owners[s], gids, 1, "moving elements to their owners")?,
            })
        })
        .collect::<Result<_>>()?;
    let rows: Vec<Vec<i32>> = maps
        .iter_mut()
        .map(|m| {
            let rows = std::mem::take(&mut m.rows);
            migrate(comm, &owners[m.from], rows, m.arity, "moving map rows to their owners")
        })
        .collect::<Result<_>>()?;
    let dat_rows: Vec<Vec<u8>> = dats
        .iter_mut()
        .map(|d| {
            let bytes = std::mem::take(&mut d.bytes);
            migrate(
                comm,
                &owners[d.set],
                bytes,
                d.row_bytes(),
                "moving dat rows to their owners",
            )
        })
        .collect::<Result<_>>()?;
    Ok(MovedRows { owned, rows, dat_rows })
}

/// The owner of every target of every owned row.
fn find_target_owners(
    r: &Ranks<'_>,
    sets: &[BlockSet],
    maps: &[BlockMap],
    rows: &[Vec<i32>],
    owners: &[Vec<u32>],
) -> Result<Vec<Vec<u32>>> {
    maps.iter()
        .zip(rows)
        .map(|(m, rows)| {
            let start = block_rows(sets[m.to].size, r.me, r.p).start;
            let mut unique: Vec<u32> = rows.iter().map(|&t| t as u32).collect();
            unique.sort_unstable();
            unique.dedup();
            let answers = ask_blocks(r.comm, &unique, sets[m.to].size, &owners[m.to], start, "finding owners")?;
            Ok(rows
                .iter()
                .map(|&t| answers[unique.binary_search(&(t as u32)).expect("asked")])
                .collect())
        })
        .collect()
}

/// The maps out of set `s`, by index.
fn out_maps(maps: &[BlockMap], s: usize) -> impl Iterator<Item = usize> + '_ {
    maps.iter()
        .enumerate()
        .filter(move |(_, m)| m.from == s)
        .map(|(k, _)| k)
}

/// Exec halos: an element goes to every other rank owning a target of one
/// of its rows (loops writing through maps compute it there).
fn exec_halos(r: &Ranks<'_>, maps: &[BlockMap], moved: &MovedRows, target_owners: &[Vec<u32>]) -> Result<ExecHalos> {
    let (comm, me, p) = (r.comm, r.me, r.p);
    let sets = moved.owned.len();
    let mut exec = ExecHalos {
        halos: Vec::with_capacity(sets),
        exports: Vec::with_capacity(sets),
        rows: vec![Vec::new(); maps.len()],
        target_owners: vec![Vec::new(); maps.len()],
    };
    for (s, o) in moved.owned.iter().enumerate() {
        let mut to: Vec<Vec<u32>> = vec![Vec::new(); p as usize];
        let mut ranks: Vec<u32> = Vec::new();
        for i in 0..o.gids.len() {
            ranks.clear();
            for k in out_maps(maps, s) {
                let a = maps[k].arity;
                ranks.extend(target_owners[k][i * a..(i + 1) * a].iter().filter(|&&q| q != me));
            }
            ranks.sort_unstable();
            ranks.dedup();
            for &q in &ranks {
                to[q as usize].push(i as u32);
            }
        }
        let sends: Vec<Vec<u32>> = to
            .iter()
            .map(|l| l.iter().map(|&i| o.gids[i as usize]).collect())
            .collect();
        let got = exchange(comm, &sends, "sending exec halos")?;
        let mut halo = Halo::default();
        for (q, g) in got.iter().enumerate() {
            halo.owners.extend(std::iter::repeat_n(q as u32, g.len()));
            halo.gids.extend(g);
        }
        for k in out_maps(maps, s) {
            let a = maps[k].arity;
            let pick = |src: &[i32]| -> Vec<Vec<i32>> {
                to.iter()
                    .map(|l| {
                        l.iter()
                            .flat_map(|&i| src[i as usize * a..(i as usize + 1) * a].iter().copied())
                            .collect()
                    })
                    .collect()
            };
            exec.rows[k] = exchange(comm, &pick(&moved.rows[k]), "sending exec halo rows")?.concat();
            let owners_as_i32: Vec<i32> = target_owners[k].iter().map(|&q| q as i32).collect();
            exec.target_owners[k] = exchange(comm, &pick(&owners_as_i32), "sending exec halo rows")?
                .concat()
                .into_iter()
                .map(|q| q as u32)
                .collect();
        }
        exec.halos.push(halo);
        exec.exports.push(to);
    }
    Ok(exec)
}

/// Core first: owned elements all of whose targets are owned here; and the
/// position in the local numbering of each owned element (by its place in
/// global id order).
fn local_order(r: &Ranks<'_>, maps: &[BlockMap], owned: &[OwnedRows], target_owners: &[Vec<u32>]) -> LocalOrder {
    let mut order: Vec<Vec<u32>> = Vec::with_capacity(owned.len());
    let mut cores = Vec::with_capacity(owned.len());
    for (s, o) in owned.iter().enumerate() {
        let all_here = |&i: &u32| {
            let i = i as usize;
            out_maps(maps, s).all(|k| {
                let a = maps[k].arity;
                target_owners[k][i * a..(i + 1) * a].iter().all(|&q| q == r.me)
            })
        };
        let (core, rest): (Vec<u32>, Vec<u32>) = (0..o.gids.len() as u32).partition(all_here);
        cores.push(core.len());
        order.push(core.into_iter().chain(rest).collect());
    }
    let local_of: Vec<Vec<u32>> = order
        .iter()
        .map(|ord| {
            let mut inv = vec![0u32; ord.len()];
            for (l, &i) in ord.iter().enumerate() {
                inv[i as usize] = l as u32;
            }
            inv
        })
        .collect();
    LocalOrder { order, cores, local_of }
}

/// Non-exec halos: what owned and exec elements reach that is neither owned
/// nor exec halo here, asked of its owners.
fn nonexec_halos(
    r: &Ranks<'_>,
    maps: &[BlockMap],
    moved: &MovedRows,
    target_owners: &[Vec<u32>],
    exec: &ExecHalos,
) -> Result<NonExecHalos> {
    let (comm, me, p) = (r.comm, r.me, r.p);
    let mut nonexec = NonExecHalos {
        halos: Vec::with_capacity(exec.halos.len()),
        exports: Vec::with_capacity(exec.halos.len()),
    };
    for (t, ex) in exec.halos.iter().enumerate() {
        let in_exec: HashSet<u32> = ex.gids.iter().copied().collect();
        let mut wanted: Vec<(u32, u32)> = Vec::new();
        for k in (0..maps.len()).filter(|&k| maps[k].to == t) {
            let reached = moved.rows[k].iter().zip(&target_owners[k]);
            let reached = reached.chain(exec.rows[k].iter().zip(&exec.target_owners[k]));
            wanted.extend(
                reached
                    .filter(|&(&g, &q)| q != me && !in_exec.contains(&(g as u32)))
                    .map(|(&g, &q)| (q, g as u32)),
            );
        }
        wanted.sort_unstable();
        wanted.dedup();
        let mut asks: Vec<Vec<u32>> = vec![Vec::new(); p as usize];
        for &(q, g) in &wanted {
            asks[q as usize].push(g);
        }
        let asked = exchange(comm, &asks, "asking for non-exec halos")?;
        let gids = &moved.owned[t].gids;
        let exports: Vec<Vec<u32>> = asked
            .iter()
            .map(|a| {
                a.iter()
                    .map(|g| gids.binary_search(g).expect("asked of its owner") as u32)
                    .collect()
            })
            .collect();
        nonexec.halos.push(Halo {
            owners: wanted.iter().map(|&(q, _)| q).collect(),
            gids: wanted.into_iter().map(|(_, g)| g).collect(),
        });
        nonexec.exports.push(exports);
    }
    Ok(nonexec)
}

/// Local map tables: owned rows in local order, then the exec halo's; the
/// non-exec halo's rows are never executed and point to 0.
fn local_maps(
    sets: &[BlockSet],
    maps: &[BlockMap],
    mut rows: Vec<Vec<i32>>,
    exec_rows: &[Vec<i32>],
    order: &LocalOrder,
    local: &LocalSets,
    me: u32,
) -> Result<Vec<(String, Map)>> {
    let mut local_maps = Vec::with_capacity(maps.len());
    for (k, m) in maps.iter().enumerate() {
        crate::halo_layout::no_rows_into_nothing(
            &m.name,
            me,
            (&local.layouts[m.from], &sets[m.from].name),
            (&local.layouts[m.to], &sets[m.to].name),
        )?;
        let g2l: HashMap<u32, i32> = local.layouts[m.to]
            .globals
            .iter()
            .enumerate()
            .map(|(l, &g)| (g, l as i32))
            .collect();
        let a = m.arity;
        let from = &local.layouts[m.from];
        let mut values = Vec::with_capacity(from.globals.len() * a);
        let to_local = |g: &i32| {
            g2l.get(&(*g as u32)).copied().ok_or_else(|| Error::Mpi {
                reason: format!("map `{}`: target {g} is not local (a halo was built wrong)", m.name),
            })
        };
        // This map's owned rows are freed once renumbered.
        let owned_rows = std::mem::take(&mut rows[k]);
        for &i in &order.order[m.from] {
            let i = i as usize;
            for g in &owned_rows[i * a..(i + 1) * a] {
                values.push(to_local(g)?);
            }
        }
        drop(owned_rows);
        for g in &exec_rows[k] {
            values.push(to_local(g)?);
        }
        values.resize(from.globals.len() * a, 0);
        local_maps.push((
            m.name.clone(),
            Map::new(&m.name, &local.sets[m.from], &local.sets[m.to], a, values)?,
        ));
    }
    Ok(local_maps)
}

/// Dats: owned rows in local order, halos filled from their owners.
fn local_dats(
    comm: &SimpleCommunicator,
    dats: &[BlockDat],
    dat_rows: Vec<Vec<u8>>,
    order: &LocalOrder,
    local: &LocalSets,
) -> Result<Vec<LocalDat>> {
    let mut local_dats = Vec::with_capacity(dats.len());
    for (d, bytes) in dats.iter().zip(dat_rows) {
        let w = d.row_bytes();
        let layout = &local.layouts[d.set];
        let mut values = vec![0u8; layout.globals.len() * w];
        for (l, &i) in order.order[d.set].iter().enumerate() {
            let i = i as usize;
            values[l * w..(l + 1) * w].copy_from_slice(&bytes[i * w..(i + 1) * w]);
        }
        fill_halo(comm, &local.neighbours[d.set], &mut values, w)?;
        local_dats.push(LocalDat {
            name: d.name.clone(),
            set: d.set,
            dim: d.dim,
            ty: d.ty,
            bytes: Some(values),
        });
    }
    Ok(local_dats)
}

/// Sends row `i` of `rows` (`width` values each) to rank `dest[i]`; returns
/// the rows this rank receives, by sending rank then in the order sent.
/// `rows` is freed once sorted by destination: at most two copies of a
/// table live at once.
fn migrate<T: Equivalence + Copy + Default>(
    comm: &impl Communicator,
    dest: &[u32],
    rows: Vec<T>,
    width: usize,
    what: &str,
) -> Result<Vec<T>> {
    let mut counts = vec![0usize; comm.size() as usize];
    for &q in dest {
        counts[q as usize] += width;
    }
    let mut at = starts(&counts);
    let mut flat = vec![T::default(); rows.len()];
    for (i, &q) in dest.iter().enumerate() {
        let to = &mut at[q as usize];
        flat[*to..*to + width].copy_from_slice(&rows[i * width..(i + 1) * width]);
        *to += width;
    }
    drop(rows);
    Ok(exchange_flat(comm, &flat, &counts, what)?.0)
}

/// The owner of every element of this rank's block of every set: the
/// primary set's from its partition, the others through the maps by the
/// rules of [`derive_owners`](crate::derive_owners) (a set mapping into an
/// owned set: its first target's owner; a set an owned set maps into: the
/// smallest owner among the elements reaching it; else blocks), each rule
/// applied to a whole set at once by asking the blocks that hold the
/// targets.
fn block_owners(
    comm: &impl Communicator,
    sets: &[BlockSet],
    maps: &[BlockMap],
    primary: usize,
    part: Vec<u32>,
) -> Result<Vec<Vec<u32>>> {
    let (p, me) = (comm.size() as u32, comm.rank() as u32);
    let block = |s: usize| block_rows(sets[s].size, me, p);
    let mut owners: Vec<Option<Vec<u32>>> = vec![None; sets.len()];
    owners[primary] = Some(part);
    loop {
        let mut changed = false;
        for m in maps {
            match (owners[m.from].is_some(), owners[m.to].is_some()) {
                (false, true) => {
                    let firsts: Vec<u32> = m.rows.chunks(m.arity).map(|r| r[0] as u32).collect();
                    let to = owners[m.to].as_ref().expect("checked");
                    let answers = ask_blocks(comm, &firsts, sets[m.to].size, to, block(m.to).start, "deriving owners")?;
                    owners[m.from] = Some(answers);
                    changed = true;
                }
                (true, false) => {
                    let from = owners[m.from].as_ref().expect("checked");
                    let n = sets[m.to].size;
                    let mut claims: Vec<Vec<u32>> = vec![Vec::new(); p as usize];
                    for (row, &r) in m.rows.chunks(m.arity).zip(from) {
                        for &t in row {
                            claims[block_owner(t as usize, n, p) as usize].extend([t as u32, r]);
                        }
                    }
                    let start = block(m.to).start;
                    let mut own = vec![u32::MAX; block(m.to).len()];
                    let counts: Vec<usize> = claims.iter().map(Vec::len).collect();
                    let flat = claims.concat();
                    drop(claims);
                    let (got, _) = exchange_flat(comm, &flat, &counts, "deriving owners")?;
                    drop(flat);
                    for c in got.chunks(2) {
                        let o = &mut own[c[0] as usize - start];
                        *o = (*o).min(c[1]);
                    }
                    // Elements no map reaches stay in their block.
                    for o in own.iter_mut().filter(|o| **o == u32::MAX) {
                        *o = me;
                    }
                    owners[m.to] = Some(own);
                    changed = true;
                }
                _ => {}
            }
        }
        if !changed {
            break;
        }
    }
    Ok(owners
        .into_iter()
        .enumerate()
        .map(|(s, o)| o.unwrap_or_else(|| vec![me; block(s).len()]))
        .collect())
}

/// The primary set's graph, distributed: this rank's block of vertices with
/// their neighbours (global numbers), joined as
/// [`dual_graph`](crate::dual_graph) joins them, or `None` when no map
/// touches the primary set. Pairs of neighbours are sent to the block of
/// their first vertex; elements sharing a target are paired by the block
/// holding the target.
#[cfg(feature = "ptscotch")]
fn dual_graph_blocks(
    comm: &impl Communicator,
    sets: &[BlockSet],
    maps: &[BlockMap],
    primary: usize,
    through: Option<&str>,
) -> Result<Option<(Vec<i64>, Vec<u32>)>> {
    let (p, me) = (comm.size() as u32, comm.rank() as u32);
    let maps: Vec<&BlockMap> = match through {
        None => maps.iter().collect(),
        Some(name) => match maps.iter().find(|m| m.name == name) {
            Some(m) if m.from == primary || m.to == primary => vec![m],
            Some(_) => {
                return Err(Error::Mpi {
                    reason: format!(
                        "partitioning `{}` through map `{name}`: it neither starts from nor points into it",
                        sets[primary].name
                    ),
                })
            }
            None => {
                return Err(Error::Mpi {
                    reason: format!(
                        "partitioning `{}` through map `{name}`: no such map",
                        sets[primary].name
                    ),
                })
            }
        },
    };
    let n = sets[primary].size;
    let mine = block_rows(n, me, p);
    let mut pairs: Vec<Vec<u32>> = vec![Vec::new(); p as usize];
    let mut pair = |a: u32, b: u32| {
        if a != b {
            pairs[block_owner(a as usize, n, p) as usize].extend([a, b]);
        }
    };
    if let Some(m) = maps.iter().find(|m| m.from == primary && m.to == primary) {
        for (i, row) in m.rows.chunks(m.arity).enumerate() {
            let a = (mine.start + i) as u32;
            for &b in row {
                pair(a, b as u32);
                pair(b as u32, a);
            }
        }
    } else if let Some(m) = maps.iter().find(|m| m.from == primary) {
        // Group the primary elements by target, at the target's block.
        let nt = sets[m.to].size;
        let mut by_target: Vec<Vec<u32>> = vec![Vec::new(); p as usize];
        for (i, row) in m.rows.chunks(m.arity).enumerate() {
            for &t in row {
                by_target[block_owner(t as usize, nt, p) as usize].extend([t as u32, (mine.start + i) as u32]);
            }
        }
        let mut members: Vec<(u32, u32)> = exchange(comm, &by_target, "building the graph")?
            .iter()
            .flat_map(|g| g.chunks(2).map(|c| (c[0], c[1])))
            .collect();
        members.sort_unstable();
        let mut row = Vec::new();
        for group in members.chunk_by(|x, y| x.0 == y.0) {
            row.clear();
            row.extend(group.iter().map(|&(_, a)| a));
            // As `dual_graph` joins a group, so that both graphs agree.
            op2_core::join_group(&row, &mut pair);
        }
    } else if let Some(m) = maps.iter().find(|m| m.to == primary) {
        let mut row = Vec::new();
        for r in m.rows.chunks(m.arity) {
            row.clear();
            row.extend(r.iter().map(|&a| a as u32));
            // As `dual_graph` joins a group, so that both graphs agree.
            op2_core::join_group(&row, &mut pair);
        }
    } else {
        return Ok(None);
    }
    // The pairs travel flat and are sorted, deduplicated and cut down to
    // their second halves in place: the graph is the largest table a rank
    // builds, and the partitioner's own memory comes on top of it.
    let counts: Vec<usize> = pairs.iter().map(Vec::len).collect();
    let flat = pairs.concat();
    drop(pairs);
    let (mut adjacent, _) = exchange_flat(comm, &flat, &counts, "building the graph")?;
    drop(flat);
    let arcs: &mut [[u32; 2]] = bytemuck::cast_slice_mut(&mut adjacent[..]);
    arcs.sort_unstable();
    let mut kept = 0;
    for i in 0..arcs.len() {
        if i == 0 || arcs[i] != arcs[kept - 1] {
            arcs[kept] = arcs[i];
            kept += 1;
        }
    }
    let mut xadj = Vec::with_capacity(mine.len() + 1);
    xadj.push(0i64);
    let mut at = 0;
    for v in mine.clone() {
        while at < kept && arcs[at][0] as usize == v {
            at += 1;
        }
        xadj.push(at as i64);
    }
    for i in 0..kept {
        adjacent[i] = adjacent[2 * i + 1];
    }
    adjacent.truncate(kept);
    adjacent.shrink_to_fit();
    Ok(Some((xadj, adjacent)))
}

/// Fills the halo rows of `local` (`width` bytes each) from their owners
/// along `neighbours`: each sends its export rows, received into the import
/// ranges (exec part, then non-exec part).
fn fill_halo(comm: &impl Communicator, neighbours: &[Neighbour], local: &mut [u8], width: usize) -> Result<()> {
    let mut sends: Vec<Vec<u8>> = vec![Vec::new(); comm.size() as usize];
    for nb in neighbours {
        let out = &mut sends[nb.rank as usize];
        for &l in &nb.export {
            out.extend_from_slice(&local[l as usize * width..(l as usize + 1) * width]);
        }
    }
    let got = exchange(comm, &sends, "filling halos")?;
    for nb in neighbours {
        let bytes = &got[nb.rank as usize];
        let (exec, nonexec) = &nb.import;
        let mut at = 0;
        for range in [exec, nonexec] {
            let len = range.len() * width;
            local[range.start * width..range.start * width + len].copy_from_slice(&bytes[at..at + len]);
            at += len;
        }
    }
    Ok(())
}

/// A Dat's local rows (owned, then halos), as bytes of its type; `None`
/// once taken.
struct LocalDat {
    name: String,
    set: usize,
    dim: usize,
    ty: ScalarType,
    bytes: Option<Vec<u8>>,
}

/// `bytes` as values of `T` (whatever their alignment).
fn values_of<T: Scalar>(bytes: &[u8]) -> Vec<T> {
    bytes
        .chunks_exact(T::TYPE.size())
        .map(bytemuck::pod_read_unaligned)
        .collect()
}

/// A mesh distributed from blocks ([`Mpi::distribute_blocks`]): this rank's
/// local Sets, Maps and Dats by name, and the way back to blocks in file
/// order for writing.
pub struct BlockDistributed {
    comm: Arc<Comm>,
    sets: Vec<(String, usize, Set)>,
    maps: Vec<(String, Map)>,
    dats: Vec<LocalDat>,
    layouts: Vec<SetLayout>,
    rank: u32,
    nranks: u32,
}

impl BlockDistributed {
    fn set_index(&self, name: &str) -> Result<usize> {
        self.sets.iter().position(|s| s.0 == name).ok_or_else(|| Error::Mpi {
            reason: format!("no set `{name}` was distributed"),
        })
    }

    /// The local set named `name`.
    pub fn set(&self, name: &str) -> Result<Set> {
        Ok(self.sets[self.set_index(name)?].2.clone())
    }

    /// The global element count of the set named `name` (a number, as the
    /// file gave it).
    pub fn global_size(&self, name: &str) -> Result<usize> {
        Ok(self.sets[self.set_index(name)?].1)
    }

    /// This rank's layout of the set named `name`: regions, the global id
    /// and the owner of every local element.
    pub fn layout(&self, name: &str) -> Result<&SetLayout> {
        Ok(&self.layouts[self.set_index(name)?])
    }

    /// The local map named `name`.
    pub fn map(&self, name: &str) -> Result<Map> {
        self.maps
            .iter()
            .find(|m| m.0 == name)
            .map(|m| m.1.clone())
            .ok_or_else(|| Error::Mpi {
                reason: format!("no map `{name}` was distributed"),
            })
    }

    /// The local Dat named `name` (owned and halo values), as `T`: an `Err`
    /// if it was given as another type, or was taken. The distribution
    /// keeps its values (see [`BlockDistributed::take_dat`]).
    pub fn dat<T: Scalar>(&self, name: &str) -> Result<Dat<T>> {
        let (d, bytes) = self.local_dat::<T>(name)?;
        Dat::from_vec(name, &self.sets[d.set].2, d.dim, values_of(bytes))
    }

    /// The local Dat named `name`, as `T`, named `local_name` (a file's
    /// names, like OP2's `p_q`, are often not the program's), handed over:
    /// the distribution keeps no copy of its values, so a program holds
    /// its mesh once. A later `dat` or `take_dat` of it is an `Err`.
    pub fn take_dat<T: Scalar>(&mut self, name: &str, local_name: &str) -> Result<Dat<T>> {
        let dat = {
            let (d, bytes) = self.local_dat::<T>(name)?;
            Dat::from_vec(local_name, &self.sets[d.set].2, d.dim, values_of(bytes))?
        };
        // Only a Dat made lets the values go.
        let d = self.dats.iter_mut().find(|d| d.name == name).expect("found above");
        d.bytes = None;
        Ok(dat)
    }

    /// The local Dat named `name` and its values, if they are of type `T`
    /// and still here.
    fn local_dat<T: Scalar>(&self, name: &str) -> Result<(&LocalDat, &[u8])> {
        let d = self.dats.iter().find(|d| d.name == name).ok_or_else(|| Error::Mpi {
            reason: format!("no dat `{name}` was distributed"),
        })?;
        if d.ty != T::TYPE {
            return Err(Error::Mpi {
                reason: format!(
                    "dat `{name}` was distributed as {}, not {}",
                    d.ty.rust_name(),
                    T::TYPE.rust_name()
                ),
            });
        }
        let bytes = d.bytes.as_deref().ok_or_else(|| Error::Mpi {
            reason: format!("dat `{name}` was taken already (BlockDistributed::take_dat)"),
        })?;
        Ok((d, bytes))
    }

    /// The owned values of `local` (a Dat on one of these sets) moved back
    /// to the blocks they were read from: this rank's rows of the file, in
    /// file order, ready to be written where they were read. Collective.
    pub fn to_blocks<T: Scalar>(&self, local: &Dat<T>) -> Result<Vec<T>> {
        crate::dat_to_blocks(self, local)
    }

    /// The layout of a local set, and the whole set's size.
    pub(crate) fn layout_of(&self, local: &Set) -> Result<(&SetLayout, usize)> {
        let s = self
            .sets
            .iter()
            .position(|s| s.2.same(local))
            .ok_or_else(|| Error::Mpi {
                reason: format!("set `{}` is not a set distributed from blocks", local.name()),
            })?;
        Ok((&self.layouts[s], self.sets[s].1))
    }

    /// The communicator the mesh was distributed over.
    pub(crate) fn comm(&self) -> &Comm {
        &self.comm
    }

    /// This rank and the number of ranks.
    pub(crate) fn rank_and_size(&self) -> (usize, usize) {
        (self.rank as usize, self.nranks as usize)
    }
}
