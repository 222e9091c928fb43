//! Airfoil's mesh and state in OP2's HDF5 layout (feature `hdf5`): the
//! objects, names and attributes OP2's `convert_mesh` writes and its
//! HDF5 Airfoil reads (sets `nodes`, `edges`, `bedges`, `cells`; maps
//! `pedge`, `pecell`, `pbedge`, `pbecell`, `pcell`; Dats `p_bound`, `p_x`,
//! `p_q`, `p_qold`, `p_res`, `p_adt`; constants `gam`, `gm1`, `cfl`, `eps`,
//! `mach`, `alpha`, `qinf`), so that files go both ways between OP2 and op2.

use std::path::Path;

use op2::hdf5::{MeshCheckpoint, MeshFile, MeshWriter};
use op2::Set;

use crate::{AirfoilDsl, AirfoilError, Constants, Mesh};

/// What an Airfoil HDF5 file holds.
#[derive(Clone, Debug, PartialEq)]
pub struct GridState {
    /// The mesh.
    pub mesh: Mesh,
    /// The flow state per cell (`p_q`, 4 values each), where the file has
    /// one: the free stream in a file `convert_mesh` made, a solution in a
    /// file [`write()`] was given one.
    pub q: Option<Vec<f64>>,
    /// The constants the file holds, [`Constants::default`] for any it
    /// lacks.
    pub constants: Constants,
}

/// The angle of attack OP2's Airfoil stores (3 degrees, in radians); op2's
/// Airfoil, like OP2's, does not use it.
fn alpha() -> f64 {
    3.0 * 1.0f64.atan() / 45.0
}

/// The one-value constants an OP2 Airfoil file holds, by name.
fn scalar_constants(c: &Constants) -> [(&'static str, f64); 6] {
    [
        ("gam", c.gam),
        ("gm1", c.gm1),
        ("cfl", c.cfl),
        ("eps", c.eps),
        ("mach", c.mach),
        ("alpha", alpha()),
    ]
}

/// A map's values, checked to have the arity Airfoil gives it (before a
/// value is read: a wrong arity may be a huge one).
fn map(file: &MeshFile, name: &str, from: &Set, to: &Set, arity: usize) -> Result<Vec<i32>, AirfoilError> {
    let dim = file.map_table(name)?.dim;
    if dim != arity {
        let reason = format!("Airfoil's {name} has {arity} entries per element, the file's {dim}");
        return Err(op2::Error::mesh_file(file.path(), name, reason).into());
    }
    Ok(file.map(name, from, to)?.values().to_vec())
}

/// That Dat `name` of the file has `dim` values per element, as Airfoil's
/// does (checked before a value is read: a wrong dim may be a huge one).
fn dat_dim(file: &MeshFile, name: &str, dim: usize) -> op2::Result<()> {
    match file.dat_table(name)?.dim {
        n if n == dim => Ok(()),
        n => {
            let reason = format!("Airfoil's {name} has {dim} values per element, the file's {n}");
            Err(op2::Error::mesh_file(file.path(), name, reason))
        }
    }
}

/// The first value of `values` that is not a finite number, as an error on
/// `name` of the file (a NaN or infinite coordinate or constant would run
/// to NaN results; the text and Gmsh readers refuse them too).
fn finite(file: &MeshFile, name: &str, dim: usize, values: &[f64]) -> op2::Result<()> {
    match values.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(k) => Err(op2::Error::mesh_file(
            file.path(),
            name,
            format!(
                "value {} of element {} is {}, not a finite number",
                k % dim,
                k / dim,
                values[k]
            ),
        )),
    }
}

/// A constant of `dim` values if the file has it, else `default`.
fn constant<const N: usize>(file: &MeshFile, name: &str, default: [f64; N]) -> Result<[f64; N], AirfoilError> {
    if !file.contains(name) {
        return Ok(default);
    }
    let values = file.constant::<f64>(name)?;
    finite(file, name, 1, &values)?;
    values.as_slice().try_into().map_err(|_| {
        op2::Error::mesh_file(
            file.path(),
            name,
            format!("Airfoil's {name} has {N} values, the file's {}", values.len()),
        )
        .into()
    })
}

/// The constants in `file`, [`Constants::default`] for any it lacks.
fn constants(file: &MeshFile) -> Result<Constants, AirfoilError> {
    let d = Constants::default();
    let [gam] = constant(file, "gam", [d.gam])?;
    let [gm1] = constant(file, "gm1", [d.gm1])?;
    let [cfl] = constant(file, "cfl", [d.cfl])?;
    let [eps] = constant(file, "eps", [d.eps])?;
    let [mach] = constant(file, "mach", [d.mach])?;
    let qinf = constant(file, "qinf", d.qinf)?;
    Ok(Constants {
        gam,
        gm1,
        cfl,
        eps,
        mach,
        qinf,
    })
}

/// Reads this rank's block of every table of the Airfoil file at `path`
/// (opened on every rank through MPI-IO) into a mesh for
/// `Mpi::distribute_blocks`, under OP2's names (primary set `cells`; Dats
/// `p_x`, `p_bound` and, where the file has it, `p_q`), and the constants.
/// Dims and arities are checked as [`read`] checks them; a boundary kind
/// other than 1 or 2 in this rank's rows fails the distribution on every
/// rank. Collective.
#[cfg(feature = "mpi")]
pub fn read_blocks(
    path: impl AsRef<Path>,
    mpi: &op2::mpi::Mpi,
) -> Result<(op2::mpi::BlockMesh, Constants), AirfoilError> {
    let file = MeshFile::open_parallel(path, mpi)?;
    let (mut mesh, sets) = read_set_and_map_blocks(&file, mpi)?;
    read_dat_blocks(&file, &mut mesh, sets)?;
    Ok((mesh, constants(&file)?))
}

/// Reads and distributes an OP2 HDF5 grid as [`read_blocks`] then
/// `Mpi::distribute_blocks` with `partitioner` on `cells` would, but with
/// the Dats read after the cut (`Mpi::distribute_blocks_with`), so that no
/// rank holds its Dats' rows and the partitioner's working memory at once.
/// Collective.
#[cfg(feature = "mpi")]
pub fn distribute_blocks(
    path: impl AsRef<Path>,
    mpi: &op2::mpi::Mpi,
    partitioner: &op2::mpi::BlockPartitioner,
) -> Result<(op2::mpi::BlockDistributed, Constants), AirfoilError> {
    let file = MeshFile::open_parallel(path, mpi)?;
    let (mesh, sets) = read_set_and_map_blocks(&file, mpi)?;
    // Every rank reads the same file: all fail here alike, or none.
    let constants = constants(&file)?;
    let distributed =
        mpi.distribute_blocks_with(mesh, "cells", partitioner, |mesh| read_dat_blocks(&file, mesh, sets))?;
    Ok((distributed, constants))
}

/// Airfoil's sets in a block file: nodes, edges, boundary edges, cells.
#[cfg(feature = "mpi")]
#[derive(Clone, Copy)]
struct BlockSets {
    nodes: op2::mpi::BlockSetId,
    cells: op2::mpi::BlockSetId,
    bedges: op2::mpi::BlockSetId,
}

/// This rank's blocks of the sets and maps, checked as [`read`] checks them.
#[cfg(feature = "mpi")]
fn read_set_and_map_blocks(
    file: &MeshFile,
    mpi: &op2::mpi::Mpi,
) -> Result<(op2::mpi::BlockMesh, BlockSets), AirfoilError> {
    let mut mesh = op2::mpi::BlockMesh::new(mpi.rank() as u32, mpi.size() as u32);
    let nodes = file.block_set(&mut mesh, "nodes")?;
    let edges = file.block_set(&mut mesh, "edges")?;
    let bedges = file.block_set(&mut mesh, "bedges")?;
    let cells = file.block_set(&mut mesh, "cells")?;
    for (name, from, to, arity) in [
        ("pedge", edges, nodes, 2),
        ("pecell", edges, cells, 2),
        ("pbedge", bedges, nodes, 2),
        ("pbecell", bedges, cells, 1),
        ("pcell", cells, nodes, 4),
    ] {
        let dim = file.map_table(name)?.dim;
        if dim != arity {
            let reason = format!("Airfoil's {name} has {arity} entries per element, the file's {dim}");
            return Err(op2::Error::mesh_file(file.path(), name, reason).into());
        }
        file.block_map(&mut mesh, name, from, to)?;
    }
    Ok((mesh, BlockSets { nodes, cells, bedges }))
}

/// This rank's blocks of the Dats (`p_x`, `p_bound` and, where the file
/// has it, `p_q`), checked as [`read`] checks them.
#[cfg(feature = "mpi")]
fn read_dat_blocks(file: &MeshFile, mesh: &mut op2::mpi::BlockMesh, sets: BlockSets) -> op2::Result<()> {
    let BlockSets { nodes, cells, bedges } = sets;
    let mut dats = vec![("p_x", nodes, 2)];
    if file.contains("p_q") {
        dats.push(("p_q", cells, 4));
    }
    for (name, set, dim) in dats {
        dat_dim(file, name, dim)?;
        file.block_dat::<f64>(mesh, name, set)?;
    }
    let coordinates = file.read_dat_rows::<f64>("p_x", mesh.rows(nodes))?;
    if let Err(e) = finite(file, "p_x", 2, &coordinates) {
        mesh.refuse(format!("{e} (in rows {:?})", mesh.rows(nodes)));
    }
    drop(coordinates);
    dat_dim(file, "p_bound", 1)?;
    let rows = mesh.rows(bedges);
    let bound = file.read_dat_rows::<i32>("p_bound", rows.clone())?;
    if let Some(k) = bound.iter().position(|&b| b != 1 && b != 2) {
        mesh.refuse(format!(
            "{}: p_bound: boundary edge {} is of kind {}, expected 1 (wall) or 2 (far field)",
            file.path().display(),
            rows.start + k,
            bound[k]
        ));
    }
    file.block_dat::<i32>(mesh, "p_bound", bedges)?;
    Ok(())
}

/// Airfoil's mesh, flow state and constants as a checkpoint after
/// `iteration` iterations, under OP2's names (`p_q` the state as it is
/// now): a file OP2 reads as a grid and [`read`] reads back, to resume from.
/// Write it with `write` on one process or `write_across` (each rank its
/// own rows) under `mpirun`.
pub fn checkpoint<'a>(a: &'a AirfoilDsl, c: &Constants, iteration: u64) -> MeshCheckpoint<'a> {
    let mut k = MeshCheckpoint::new(iteration)
        .map(&a.pedge)
        .map(&a.pecell)
        .map(&a.pbedge)
        .map(&a.pbecell)
        .map(&a.pcell)
        .dat_as("p_bound", &a.bound)
        .dat_as("p_x", &a.x)
        .dat_as("p_q", &a.q)
        .dat_as("p_qold", &a.qold)
        .dat_as("p_res", &a.res)
        .dat_as("p_adt", &a.adt);
    for (name, value) in scalar_constants(c) {
        k = k.constant(name, &[value]);
    }
    k.constant("qinf", &c.qinf)
}

/// Reads an Airfoil mesh, its state and its constants from `path`. Every
/// object is checked (see `op2::hdf5::MeshFile`), and beyond that each
/// map's arity, `p_x`'s and `p_q`'s dims and every `p_bound` (1 wall, 2 far
/// field).
pub fn read(path: impl AsRef<Path>) -> Result<GridState, AirfoilError> {
    let file = MeshFile::open(path)?;
    let bad =
        |object: &str, reason: String| -> AirfoilError { op2::Error::mesh_file(file.path(), object, reason).into() };
    let nodes = file.set("nodes")?;
    let edges = file.set("edges")?;
    let bedges = file.set("bedges")?;
    let cells = file.set("cells")?;
    let dat = |name: &str, set: &Set, dim: usize| -> Result<Vec<f64>, AirfoilError> {
        dat_dim(&file, name, dim)?;
        Ok(file.dat::<f64>(name, set)?.to_vec())
    };
    let x = dat("p_x", &nodes, 2)?;
    finite(&file, "p_x", 2, &x)?;
    dat_dim(&file, "p_bound", 1)?;
    let bound = file.dat::<i32>("p_bound", &bedges)?.to_vec();
    if let Some(k) = bound.iter().position(|&b| b != 1 && b != 2) {
        return Err(bad(
            "p_bound",
            format!(
                "boundary edge {k} is of kind {}, expected 1 (wall) or 2 (far field)",
                bound[k]
            ),
        ));
    }
    let q = match file.contains("p_q") {
        true => Some(dat("p_q", &cells, 4)?),
        false => None,
    };
    Ok(GridState {
        mesh: Mesh {
            x,
            cell: map(&file, "pcell", &cells, &nodes, 4)?,
            edge: map(&file, "pedge", &edges, &nodes, 2)?,
            ecell: map(&file, "pecell", &edges, &cells, 2)?,
            bedge: map(&file, "pbedge", &bedges, &nodes, 2)?,
            becell: map(&file, "pbecell", &bedges, &cells, 1)?,
            bound,
        },
        q,
        constants: constants(&file)?,
    })
}

/// Writes `mesh`, the state `q` (4 values per cell) and the constants to
/// `path` as OP2's `convert_mesh` does (`p_qold`, `p_res` and `p_adt` as
/// zeros), replacing any file there.
pub fn write(path: impl AsRef<Path>, mesh: &Mesh, constants: &Constants, q: &[f64]) -> Result<(), AirfoilError> {
    let w = MeshWriter::create(path)?;
    if q.len() != 4 * mesh.ncell() {
        let reason = format!("{} values for {} cells of 4", q.len(), mesh.ncell());
        return Err(op2::Error::mesh_file(w.path(), "p_q", reason).into());
    }
    w.write_set_size("nodes", mesh.nnode())?;
    w.write_set_size("edges", mesh.nedge())?;
    w.write_set_size("bedges", mesh.nbedge())?;
    w.write_set_size("cells", mesh.ncell())?;
    w.write_map_table("pedge", 2, &mesh.edge)?;
    w.write_map_table("pecell", 2, &mesh.ecell)?;
    w.write_map_table("pbedge", 2, &mesh.bedge)?;
    w.write_map_table("pbecell", 1, &mesh.becell)?;
    w.write_map_table("pcell", 4, &mesh.cell)?;
    w.write_dat_table("p_bound", 1, &mesh.bound)?;
    w.write_dat_table("p_x", 2, &mesh.x)?;
    w.write_dat_table("p_q", 4, q)?;
    w.write_dat_table("p_qold", 4, &vec![0.0f64; q.len()])?;
    w.write_dat_table("p_res", 4, &vec![0.0f64; q.len()])?;
    w.write_dat_table("p_adt", 1, &vec![0.0f64; mesh.ncell()])?;
    for (name, value) in scalar_constants(constants) {
        w.write_constant(name, &[value])?;
    }
    w.write_constant("qinf", &constants.qinf)?;
    Ok(w.finish()?)
}
