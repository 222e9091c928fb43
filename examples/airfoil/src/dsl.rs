//! Airfoil with op2: the mesh as Sets, Maps and Dats, the constants as
//! Globals, one iteration as eleven `par_loop!`s.

use op2::prelude::*;

use crate::kernels::{adt_calc, bres_calc, res_calc, save_soln, update};
use crate::{Constants, Mesh};

/// The Airfoil state as op2 carriers.
pub struct AirfoilDsl {
    /// Mesh nodes.
    pub nodes: Set,
    /// Interior edges.
    pub edges: Set,
    /// Boundary edges.
    pub bedges: Set,
    /// Quadrilateral cells.
    pub cells: Set,
    /// edges -> nodes (2).
    pub pedge: Map,
    /// edges -> cells (2).
    pub pecell: Map,
    /// bedges -> nodes (2).
    pub pbedge: Map,
    /// bedges -> cells (1).
    pub pbecell: Map,
    /// cells -> nodes (4).
    pub pcell: Map,
    /// Boundary kind on bedges.
    pub bound: Dat<i32>,
    /// Node coordinates.
    pub x: Dat<f64>,
    /// Flow state per cell.
    pub q: Dat<f64>,
    /// State at the start of the iteration.
    pub qold: Dat<f64>,
    /// Local time step per cell.
    pub adt: Dat<f64>,
    /// Residual per cell.
    pub res: Dat<f64>,
    /// Constant: ratio of specific heats.
    pub gam: Global<f64>,
    /// Constant: `gam - 1`.
    pub gm1: Global<f64>,
    /// Constant: CFL number.
    pub cfl: Global<f64>,
    /// Constant: dissipation coefficient.
    pub eps: Global<f64>,
    /// Constant: free-stream state.
    pub qinf: Global<f64>,
    /// Reduction: sum of squared updates.
    pub rms: Global<f64>,
    /// Cells in the whole mesh (all ranks), for the rms.
    pub global_cells: usize,
}

/// What an Airfoil's mesh gives it: sets, maps, boundary kinds,
/// coordinates and the initial flow state, and the number of cells in the
/// whole mesh (all ranks).
struct MeshCarriers {
    nodes: Set,
    edges: Set,
    bedges: Set,
    cells: Set,
    pedge: Map,
    pecell: Map,
    pbedge: Map,
    pbecell: Map,
    pcell: Map,
    bound: Dat<i32>,
    x: Dat<f64>,
    q: Dat<f64>,
    global_cells: usize,
}

impl AirfoilDsl {
    /// Builds the carriers from a mesh, with `q = qinf` everywhere (the
    /// mesh's tables are copied; [`AirfoilDsl::from_mesh`] takes them).
    pub fn new(mesh: &Mesh, c: &Constants) -> op2::Result<AirfoilDsl> {
        AirfoilDsl::from_mesh(mesh.clone(), c)
    }

    /// As [`AirfoilDsl::new`], moving the mesh's tables into the maps and
    /// Dats: the mesh is never held twice (the 720K mesh's tables are 46 MB).
    pub fn from_mesh(mesh: Mesh, c: &Constants) -> op2::Result<AirfoilDsl> {
        let nodes = Set::new("nodes", mesh.nnode())?;
        let edges = Set::new("edges", mesh.nedge())?;
        let bedges = Set::new("bedges", mesh.nbedge())?;
        let cells = Set::new("cells", mesh.ncell())?;
        let q0: Vec<f64> = c.qinf.iter().copied().cycle().take(4 * mesh.ncell()).collect();
        let carriers = MeshCarriers {
            pedge: Map::new("pedge", &edges, &nodes, 2, mesh.edge)?,
            pecell: Map::new("pecell", &edges, &cells, 2, mesh.ecell)?,
            pbedge: Map::new("pbedge", &bedges, &nodes, 2, mesh.bedge)?,
            pbecell: Map::new("pbecell", &bedges, &cells, 1, mesh.becell)?,
            pcell: Map::new("pcell", &cells, &nodes, 4, mesh.cell)?,
            bound: Dat::from_vec("bound", &bedges, 1, mesh.bound)?,
            x: Dat::from_vec("x", &nodes, 2, mesh.x)?,
            q: Dat::from_vec("q", &cells, 4, q0)?,
            global_cells: cells.size(),
            nodes,
            edges,
            bedges,
            cells,
        };
        AirfoilDsl::assemble(carriers, c)
    }

    /// The carriers every Airfoil has besides its mesh's: the work Dats
    /// (`qold`, `adt`, `res`, zero) and the Globals of `c` and the rms.
    fn assemble(m: MeshCarriers, c: &Constants) -> op2::Result<AirfoilDsl> {
        Ok(AirfoilDsl {
            qold: Dat::zeros("qold", &m.cells, 4)?,
            adt: Dat::zeros("adt", &m.cells, 1)?,
            res: Dat::zeros("res", &m.cells, 4)?,
            gam: Global::scalar("gam", c.gam),
            gm1: Global::scalar("gm1", c.gm1),
            cfl: Global::scalar("cfl", c.cfl),
            eps: Global::scalar("eps", c.eps),
            qinf: Global::new("qinf", c.qinf.to_vec())?,
            rms: Global::scalar("rms", 0.0),
            nodes: m.nodes,
            edges: m.edges,
            bedges: m.bedges,
            cells: m.cells,
            pedge: m.pedge,
            pecell: m.pecell,
            pbedge: m.pbedge,
            pbecell: m.pbecell,
            pcell: m.pcell,
            bound: m.bound,
            x: m.x,
            q: m.q,
            global_cells: m.global_cells,
        })
    }

    /// The Airfoil of a mesh distributed from blocks
    /// (`op2::mpi::Mpi::distribute_blocks` of what `hdf5_grid::read_blocks`
    /// read): sets, maps and Dats under OP2's names, `q` from `p_q` where
    /// the file had it, else the free stream `c.qinf`. The Dats are taken
    /// from `d` (`BlockDistributed::take_dat`): the mesh is held once.
    #[cfg(feature = "mpi")]
    pub fn from_blocks(d: &mut op2::mpi::BlockDistributed, c: &Constants) -> op2::Result<AirfoilDsl> {
        let cells = d.set("cells")?;
        let q = match d.take_dat::<f64>("p_q", "q") {
            Ok(q) => q,
            Err(_) => {
                let q0: Vec<f64> = c.qinf.iter().copied().cycle().take(4 * cells.total_size()).collect();
                Dat::from_vec("q", &cells, 4, q0)?
            }
        };
        let carriers = MeshCarriers {
            nodes: d.set("nodes")?,
            edges: d.set("edges")?,
            bedges: d.set("bedges")?,
            pedge: d.map("pedge")?,
            pecell: d.map("pecell")?,
            pbedge: d.map("pbedge")?,
            pbecell: d.map("pbecell")?,
            pcell: d.map("pcell")?,
            bound: d.take_dat("p_bound", "p_bound")?,
            x: d.take_dat("p_x", "p_x")?,
            q,
            global_cells: d.global_size("cells")?,
            cells,
        };
        AirfoilDsl::assemble(carriers, c)
    }

    /// The local part of this (global, replicated) state on one rank of a
    /// distributed run, and the distribution (which gathers Dats back, e.g.
    /// the solution to write).
    #[cfg(feature = "mpi")]
    pub fn distribute(&self, mpi: &op2::mpi::Mpi) -> op2::Result<(AirfoilDsl, op2::mpi::Distributed)> {
        let d = mpi.distribute(
            &[&self.nodes, &self.edges, &self.bedges, &self.cells],
            &[&self.pedge, &self.pecell, &self.pbedge, &self.pbecell, &self.pcell],
            &self.cells,
        )?;
        let local = AirfoilDsl {
            nodes: d.set(&self.nodes)?,
            edges: d.set(&self.edges)?,
            bedges: d.set(&self.bedges)?,
            cells: d.set(&self.cells)?,
            pedge: d.map(&self.pedge)?,
            pecell: d.map(&self.pecell)?,
            pbedge: d.map(&self.pbedge)?,
            pbecell: d.map(&self.pbecell)?,
            pcell: d.map(&self.pcell)?,
            bound: d.dat(&self.bound)?,
            x: d.dat(&self.x)?,
            q: d.dat(&self.q)?,
            qold: d.dat(&self.qold)?,
            adt: d.dat(&self.adt)?,
            res: d.dat(&self.res)?,
            gam: self.gam.clone(),
            gm1: self.gm1.clone(),
            cfl: self.cfl.clone(),
            eps: self.eps.clone(),
            qinf: self.qinf.clone(),
            rms: self.rms.clone(),
            global_cells: self.global_cells,
        };
        Ok((local, d))
    }

    /// The flow for people, per cell: density `q[0]`, velocity
    /// `(q[1], q[2]) / q[0]` and pressure `gm1 (q[3] - |q[1..3]|^2 / (2 q[0]))`,
    /// computed on the host from `q` now.
    ///
    /// # Errors
    /// [`op2::Error::HostBorrow`] if `q` or `gm1` is mutably borrowed.
    pub fn flow(&self) -> op2::Result<[Dat<f64>; 3]> {
        let q = self.q.try_data_ro()?;
        let gm1 = self.gm1.try_data_ro()?[0];
        let cells = &q[..4 * self.cells.size()];
        let density: Vec<f64> = cells.chunks_exact(4).map(|q| q[0]).collect();
        let velocity: Vec<f64> = cells.chunks_exact(4).flat_map(|q| [q[1] / q[0], q[2] / q[0]]).collect();
        let pressure: Vec<f64> = cells
            .chunks_exact(4)
            .map(|q| gm1 * (q[3] - 0.5 * (q[1] * q[1] + q[2] * q[2]) / q[0]))
            .collect();
        // Halo cells (under MPI) get zeros: only owned cells are written.
        let on_cells = |name: &str, dim: usize, mut v: Vec<f64>| {
            v.resize(dim * self.cells.total_size(), 0.0);
            Dat::from_vec(name, &self.cells, dim, v)
        };
        Ok([
            on_cells("density", 1, density)?,
            on_cells("velocity", 2, velocity)?,
            on_cells("pressure", 1, pressure)?,
        ])
    }

    /// Writes the mesh and its flow ([`AirfoilDsl::flow`]) as a VTK
    /// UnstructuredGrid for ParaView (`op2::output::write_vtu`): the
    /// quadrilateral cells this process owns, with density, velocity and
    /// pressure as cell data.
    ///
    /// # Errors
    /// As [`AirfoilDsl::flow`] and `op2::output::write_vtu`.
    pub fn write_vtk(&self, path: impl AsRef<std::path::Path>) -> op2::Result<()> {
        let [density, velocity, pressure] = self.flow()?;
        op2::output::write_vtu(path, &self.pcell, &self.x, &[&density, &velocity, &pressure], &[])
    }

    /// As [`AirfoilDsl::write_vtk`], this rank's piece of a distributed
    /// run of `ranks` ranks: `path` (`DIR/NAME.vtu`) becomes
    /// `DIR/NAME_<rank>.vtu`, and rank 0 also writes their index
    /// `DIR/NAME.pvtu`, which ParaView opens as one mesh; returns the file
    /// to open (the index).
    ///
    /// # Errors
    /// As [`AirfoilDsl::write_vtk`] and `op2::output::write_pvtu`.
    pub fn write_vtk_piece(
        &self,
        path: impl AsRef<std::path::Path>,
        rank: usize,
        ranks: usize,
    ) -> op2::Result<std::path::PathBuf> {
        let path = path.as_ref();
        let stem = path
            .file_stem()
            .map_or("flow".into(), |s| s.to_string_lossy().into_owned());
        let piece = |r: usize| format!("{stem}_{r}.vtu");
        let [density, velocity, pressure] = self.flow()?;
        let flow: [&dyn op2::output::Field; 3] = [&density, &velocity, &pressure];
        op2::output::write_vtu(path.with_file_name(piece(rank)), &self.pcell, &self.x, &flow, &[])?;
        let index = path.with_file_name(format!("{stem}.pvtu"));
        if rank == 0 {
            let pieces: Vec<String> = (0..ranks).map(piece).collect();
            op2::output::write_pvtu(&index, &pieces, &self.x, &flow, &[])?;
        }
        Ok(index)
    }

    /// One Airfoil iteration (`save_soln`, then twice the predictor/corrector
    /// step); returns `sqrt(rms / ncell)` of the second update. Reading the
    /// rms waits for a device; [`AirfoilDsl::step`] does not.
    pub fn iteration(&self, rt: &Runtime) -> op2::Result<f64> {
        self.step(rt)?;
        Ok(self.rms())
    }

    /// `sqrt(rms / ncell)` of the last update (downloaded from a device
    /// only now, if a device loop left it there).
    pub fn rms(&self) -> f64 {
        (self.rms.value() / self.global_cells as f64).sqrt()
    }

    /// One Airfoil iteration without reading the rms: on a device backend
    /// nothing comes back to the host, and the loops need not wait for it.
    pub fn step(&self, rt: &Runtime) -> op2::Result<()> {
        par_loop!(rt, save_soln, self.cells, self.q(READ), self.qold(WRITE))?;
        for _ in 0..2 {
            par_loop!(
                rt,
                adt_calc,
                self.cells,
                self.x(READ, self.pcell[0]),
                self.x(READ, self.pcell[1]),
                self.x(READ, self.pcell[2]),
                self.x(READ, self.pcell[3]),
                self.q(READ),
                self.adt(WRITE),
                self.gam(READ),
                self.gm1(READ),
                self.cfl(READ)
            )?;
            par_loop!(
                rt,
                res_calc,
                self.edges,
                self.x(READ, self.pedge[0]),
                self.x(READ, self.pedge[1]),
                self.q(READ, self.pecell[0]),
                self.q(READ, self.pecell[1]),
                self.adt(READ, self.pecell[0]),
                self.adt(READ, self.pecell[1]),
                self.res(INC, self.pecell[0]),
                self.res(INC, self.pecell[1]),
                self.gm1(READ),
                self.eps(READ)
            )?;
            par_loop!(
                rt,
                bres_calc,
                self.bedges,
                self.x(READ, self.pbedge[0]),
                self.x(READ, self.pbedge[1]),
                self.q(READ, self.pbecell[0]),
                self.adt(READ, self.pbecell[0]),
                self.res(INC, self.pbecell[0]),
                self.bound(READ),
                self.gm1(READ),
                self.eps(READ),
                self.qinf(READ)
            )?;
            self.rms.fill(0.0);
            par_loop!(
                rt,
                update,
                self.cells,
                self.qold(READ),
                self.q(WRITE),
                self.res(RW),
                self.adt(READ),
                self.rms(INC)
            )?;
        }
        Ok(())
    }
}
