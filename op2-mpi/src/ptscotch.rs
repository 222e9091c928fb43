//! PT-Scotch, the parallel graph partitioner (feature `ptscotch`): a graph
//! whose vertices are spread over the ranks in contiguous blocks, each rank
//! holding its vertices' adjacency, cut into one part per rank without any
//! rank seeing the whole graph. Linked statically (`build.rs`).

use std::ffi::c_int;

use mpi::raw::AsRaw;
use mpi::traits::*;
use op2_core::{Error, Result};

/// `SCOTCH_Num` as `scripts/build_ptscotch.sh` builds it (checked at run
/// time against `SCOTCH_numSizeof`).
type Num = i32;

#[repr(C)]
struct Dgraph {
    _opaque: [u8; 0],
}

#[repr(C)]
struct Strat {
    _opaque: [u8; 0],
}

extern "C" {
    fn SCOTCH_numSizeof() -> c_int;
    fn SCOTCH_randomReset();
    fn SCOTCH_dgraphAlloc() -> *mut Dgraph;
    fn SCOTCH_dgraphInit(graph: *mut Dgraph, comm: mpi::ffi::MPI_Comm) -> c_int;
    #[allow(clippy::too_many_arguments)]
    fn SCOTCH_dgraphBuild(
        graph: *mut Dgraph,
        baseval: Num,
        vertlocnbr: Num,
        vertlocmax: Num,
        vertloctab: *mut Num,
        vendloctab: *mut Num,
        veloloctab: *mut Num,
        vlblloctab: *mut Num,
        edgelocnbr: Num,
        edgelocsiz: Num,
        edgeloctab: *mut Num,
        edgegsttab: *mut Num,
        edloloctab: *mut Num,
    ) -> c_int;
    fn SCOTCH_dgraphPart(graph: *mut Dgraph, partnbr: Num, strat: *mut Strat, partloctab: *mut Num) -> c_int;
    fn SCOTCH_dgraphExit(graph: *mut Dgraph);
    fn SCOTCH_stratAlloc() -> *mut Strat;
    fn SCOTCH_stratInit(strat: *mut Strat) -> c_int;
    fn SCOTCH_stratExit(strat: *mut Strat);
    fn SCOTCH_memFree(ptr: *mut std::ffi::c_void);
}

/// Frees Scotch's graph and strategy however the partition ends.
struct Handles {
    graph: *mut Dgraph,
    strat: *mut Strat,
    graph_live: bool,
    strat_live: bool,
}

impl Drop for Handles {
    fn drop(&mut self) {
        // SAFETY: each pointer came from Scotch's allocator and is exited
        // only if it was initialised.
        unsafe {
            if self.graph_live {
                SCOTCH_dgraphExit(self.graph);
            }
            if self.strat_live {
                SCOTCH_stratExit(self.strat);
            }
            SCOTCH_memFree(self.graph.cast());
            SCOTCH_memFree(self.strat.cast());
        }
    }
}

/// Cuts a distributed graph into `comm.size()` parts: this rank holds
/// vertices `first..first + xadj.len() - 1` (blocks in rank order), their
/// adjacency in CSR form (`xadj` local offsets, `adjncy` global vertex
/// numbers, symmetric, no self loops) and weights, which it frees as it
/// goes. Returns each local
/// vertex's part. Collective; every rank gets an `Err` if one fails.
pub(crate) fn part<C: Communicator + AsRaw<Raw = mpi::ffi::MPI_Comm>>(
    comm: &C,
    xadj: Vec<i64>,
    adjncy: Vec<u32>,
    weights: Vec<i64>,
) -> Result<Vec<u32>> {
    let fail = |what: &str| Error::Mpi {
        reason: format!("PT-Scotch: {what}"),
    };
    // SAFETY: a plain query.
    if unsafe { SCOTCH_numSizeof() } as usize != std::mem::size_of::<Num>() {
        return Err(fail("the library was built with another SCOTCH_Num size than 32 bits"));
    }
    let num = |x: i64, what: &str| Num::try_from(x).map_err(|_| fail(&format!("{what} {x} does not fit SCOTCH_Num")));
    // Each table is freed once converted: Scotch's own memory comes on top.
    let converted = (|| -> Result<(Vec<Num>, Vec<Num>, Vec<Num>)> {
        let vert = xadj.iter().map(|&x| num(x, "offset")).collect::<Result<_>>()?;
        drop(xadj);
        let edges = adjncy.iter().map(|&x| num(x.into(), "vertex")).collect::<Result<_>>()?;
        drop(adjncy);
        let velo = weights.iter().map(|&x| num(x, "weight")).collect::<Result<_>>()?;
        Ok((vert, edges, velo))
    })();
    // A rank whose graph does not fit fails with the others, not alone
    // before their collective part.
    let (mut vert, mut edges, mut velo) = match converted {
        Ok(tables) => crate::all_to_all::agree(comm, Ok(())).map(|()| tables)?,
        // agree returns the failure (this rank's or the lowest failing one's).
        Err(e) => return crate::all_to_all::agree(comm, Err(e)).map(|()| Vec::new()),
    };
    let n = vert.len() - 1;
    let mut part: Vec<Num> = vec![0; n.max(1)];
    // SAFETY: the handles are freed by Handles; every array outlives the
    // graph (exited before they drop, Handles being declared after them)
    // and has the length given.
    let status = unsafe {
        let mut h = Handles {
            graph: SCOTCH_dgraphAlloc(),
            strat: SCOTCH_stratAlloc(),
            graph_live: false,
            strat_live: false,
        };
        if h.graph.is_null() || h.strat.is_null() {
            1
        } else if SCOTCH_dgraphInit(h.graph, comm.as_raw()) != 0 {
            2
        } else {
            h.graph_live = true;
            let built = SCOTCH_dgraphBuild(
                h.graph,
                0,
                n as Num,
                n as Num,
                vert.as_mut_ptr(),
                vert.as_mut_ptr().add(1),
                velo.as_mut_ptr(),
                std::ptr::null_mut(),
                edges.len() as Num,
                edges.len() as Num,
                edges.as_mut_ptr(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            );
            if built != 0 {
                3
            } else if SCOTCH_stratInit(h.strat) != 0 {
                4
            } else {
                h.strat_live = true;
                // The same cut every run: Scotch's generator from its fixed seed.
                SCOTCH_randomReset();
                match SCOTCH_dgraphPart(h.graph, comm.size() as Num, h.strat, part.as_mut_ptr()) {
                    0 => 0,
                    _ => 5,
                }
            }
        }
    };
    let mut worst = 0;
    crate::waiting::all_reduce_into(comm, &status, &mut worst, mpi::collective::SystemOperation::max());
    match worst {
        0 => Ok(part[..n].iter().map(|&p| p as u32).collect()),
        1 => Err(fail("out of memory for the graph")),
        2 => Err(fail("SCOTCH_dgraphInit failed")),
        3 => Err(fail("SCOTCH_dgraphBuild refused the graph")),
        4 => Err(fail("SCOTCH_stratInit failed")),
        _ => Err(fail("SCOTCH_dgraphPart failed")),
    }
}
