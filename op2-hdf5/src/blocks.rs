//! A mesh file read and written in blocks under mpirun (feature `mpi`): each
//! rank reads only its contiguous block of rows of every set's tables into a
//! [`BlockMesh`], which `Mpi::distribute_blocks` distributes without any rank
//! holding a whole set; and each rank writes back only its block of a Dat
//! (from `BlockDistributed::to_blocks`) into one dataset of the whole size.

use std::ops::Range;
use std::path::Path;

use hdf5::H5Type;
use op2_core::{Result, Scalar, ScalarType};
use op2_mpi::{BlockMesh, BlockSetId, Mpi};

use crate::element_type::type_name;
use crate::reader::bad;
use crate::{MeshFile, MeshWriter};

impl MeshFile {
    /// Adds the set `name` to `mesh`, with the size the file gives it.
    pub fn block_set(&self, mesh: &mut BlockMesh, name: &str) -> Result<BlockSetId> {
        Ok(mesh.add_set(name, self.set_size(name)?))
    }

    /// Adds the map `name` from `from` to `to` to `mesh`: this rank's block
    /// of rows only. The table must have a row per element of `from`.
    pub fn block_map(&self, mesh: &mut BlockMesh, name: &str, from: BlockSetId, to: BlockSetId) -> Result<()> {
        let table = self.map_table(name)?;
        let (set, size) = mesh.set_name_and_size(from);
        if table.rows != size {
            return Err(bad(
                self.path(),
                name,
                format!("{} rows, but its set `{set}` has {size} elements", table.rows),
            ));
        }
        let rows = self.read_map_rows(name, mesh.rows(from))?;
        mesh.add_map(name, from, to, table.dim, rows);
        Ok(())
    }

    /// Adds the Dat `name` on `set` to `mesh`, as `T`: this rank's block of
    /// rows only.
    pub fn block_dat<T: Scalar>(&self, mesh: &mut BlockMesh, name: &str, set: BlockSetId) -> Result<()> {
        let table = self.dat_table(name)?;
        let (set_name, size) = mesh.set_name_and_size(set);
        if table.rows != size {
            return Err(bad(
                self.path(),
                name,
                format!("{} rows, but its set `{set_name}` has {size} elements", table.rows),
            ));
        }
        let values = self.read_dat_rows::<T>(name, mesh.rows(set))?;
        mesh.add_dat(name, set, table.dim, values);
        Ok(())
    }
}

impl MeshWriter {
    /// Opens an existing file for writing on every rank at once through
    /// MPI-IO (collective: every rank calls it), so that each writes its own
    /// rows ([`MeshWriter::write_dat_rows`]).
    pub fn append_parallel(path: impl AsRef<Path>, _mpi: &Mpi) -> Result<MeshWriter> {
        let path = path.as_ref().to_path_buf();
        // SAFETY: reading the handle of the world communicator (`Mpi` says
        // MPI is initialised).
        let world = unsafe { mpi::ffi::RSMPI_COMM_WORLD };
        let file = hdf5::File::with_options()
            .with_fapl(|p| p.mpio(world, None))
            .open_rw(&path)
            .map_err(|e| bad(&path, "/", format!("cannot open for writing through MPI-IO: {e}")))?;
        Ok(MeshWriter::from_parts(file, path))
    }

    /// Writes rows `rows` (`dim` values each) of the Dat `name`, a table of
    /// `total` rows in all: each rank its own block, the blocks together
    /// the whole table. A table already there of that shape and type is
    /// written into (its attributes kept); otherwise it is made, with OP2's
    /// attributes. Collective when the file was opened in parallel: every
    /// rank calls it with the same `name`, `dim` and `total`.
    pub fn write_dat_rows<T: Scalar>(
        &self,
        name: &str,
        dim: usize,
        total: usize,
        rows: Range<usize>,
        values: &[T],
    ) -> Result<()> {
        self.write_rows(name, dim, total, rows, values, |d| self.dat_attrs::<T>(name, d, dim))
    }

    /// [`MeshWriter::write_dat_rows`] for the Map `name` (`dim` entries a
    /// row), made with OP2's attributes for a map.
    pub fn write_map_rows(
        &self,
        name: &str,
        dim: usize,
        total: usize,
        rows: Range<usize>,
        values: &[i32],
    ) -> Result<()> {
        self.write_rows(name, dim, total, rows, values, |d| self.map_attrs(name, d, dim, total))
    }

    /// Rows of a table, made with `attrs` if it is not there.
    fn write_rows<T: Scalar>(
        &self,
        name: &str,
        dim: usize,
        total: usize,
        rows: Range<usize>,
        values: &[T],
        attrs: impl FnOnce(&hdf5::Dataset) -> Result<()>,
    ) -> Result<()> {
        if rows.end > total || Some(values.len()) != rows.len().checked_mul(dim) {
            return Err(bad(
                self.path(),
                name,
                format!("{} values for rows {rows:?} of {total} at dim {dim}", values.len()),
            ));
        }
        let dataset = match self.existing_table(name, [total, dim], T::TYPE) {
            Some(d) => d,
            None => {
                let d = self.typed(name, &[total, dim], &[] as &[T])?;
                attrs(&d)?;
                d
            }
        };
        if rows.is_empty() {
            // This rank has no rows of it (it took part in making it).
            return Ok(());
        }
        fn put<E: H5Type>(d: &hdf5::Dataset, rows: Range<usize>, dim: usize, v: &[E]) -> hdf5::Result<()> {
            let view = ndarray::ArrayView2::from_shape((rows.len(), dim), v).map_err(|e| e.to_string())?;
            d.write_slice(view, (rows, ..))
        }
        match T::TYPE {
            ScalarType::F64 => put::<f64>(&dataset, rows, dim, bytemuck::cast_slice(values)),
            ScalarType::F32 => put::<f32>(&dataset, rows, dim, bytemuck::cast_slice(values)),
            ScalarType::I32 => put::<i32>(&dataset, rows, dim, bytemuck::cast_slice(values)),
            ScalarType::I64 => put::<i64>(&dataset, rows, dim, bytemuck::cast_slice(values)),
            ScalarType::U32 => put::<u32>(&dataset, rows, dim, bytemuck::cast_slice(values)),
        }
        .map_err(|e| {
            bad(
                self.path(),
                name,
                format!("cannot write rows: {e} ({})", type_name(T::TYPE)),
            )
        })
    }
}
