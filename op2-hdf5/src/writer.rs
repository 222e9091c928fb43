//! Writing OP2's HDF5 layout, attribute for attribute as OP2's own tools
//! write it, so that OP2 reads what op2 writes.

use std::path::{Path, PathBuf};

use hdf5::types::FixedAscii;
use hdf5::{Dataset, Group, H5Type};
use op2_core::{Dat, Map, Result, Scalar, ScalarType, Set};

use crate::element_type::type_name;
use crate::reader::bad;

/// The length of the `type` string OP2 gives a Map ("int", NUL-padded).
const MAP_TYPE_LEN: usize = 10;

/// An HDF5 file open for writing in OP2's layout. Writing an object that
/// is already there replaces it.
pub struct MeshWriter {
    file: hdf5::File,
    path: PathBuf,
}

impl MeshWriter {
    /// Creates `path` (replacing any file there).
    pub fn create(path: impl AsRef<Path>) -> Result<MeshWriter> {
        let path = path.as_ref().to_path_buf();
        let file = hdf5::File::with_options()
            .with_fapl(|p| p.file_locking(false))
            .create(&path)
            .map_err(|e| bad(&path, "/", format!("cannot create: {e}")))?;
        Ok(MeshWriter { file, path })
    }

    /// Opens `path` to add or replace objects (creating it if missing), as
    /// OP2's `op_fetch_data_hdf5_file` does: e.g. a solution written into
    /// the mesh file it started from.
    pub fn append(path: impl AsRef<Path>) -> Result<MeshWriter> {
        let path = path.as_ref().to_path_buf();
        let file = hdf5::File::with_options()
            .with_fapl(|p| p.file_locking(false))
            .append(&path)
            .map_err(|e| bad(&path, "/", format!("cannot open for writing: {e}")))?;
        Ok(MeshWriter { file, path })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes everything to disk and closes the file, reporting what the
    /// close found (dropping the writer closes it too, silently).
    pub fn finish(self) -> Result<()> {
        self.file
            .flush()
            .map_err(|e| bad(&self.path, "/", format!("cannot write: {e}")))?;
        self.file
            .close()
            .map_err(|e| bad(&self.path, "/", format!("cannot close: {e}")))
    }

    /// The group `name` lives in (made if missing) and its last part.
    fn parent<'a>(&self, name: &'a str) -> Result<(Group, &'a str)> {
        let name = name.trim_start_matches('/');
        let (groups, leaf) = name.rsplit_once('/').unwrap_or(("", name));
        if leaf.is_empty() {
            return Err(bad(&self.path, name, "an object needs a name"));
        }
        let mut group: Group = (*self.file).clone();
        for part in groups.split('/').filter(|p| !p.is_empty()) {
            group = match group.link_exists(part) {
                true => group.group(part),
                false => group.create_group(part),
            }
            .map_err(|e| bad(&self.path, name, format!("group `{part}`: {e}")))?;
        }
        if group.link_exists(leaf) {
            group
                .unlink(leaf)
                .map_err(|e| bad(&self.path, name, format!("cannot replace: {e}")))?;
        }
        Ok((group, leaf))
    }

    /// A dataset `name` of `shape`, holding `values`.
    fn dataset<E: H5Type>(&self, name: &str, shape: &[usize], values: &[E]) -> Result<Dataset> {
        let (group, leaf) = self.parent(name)?;
        let dataset = group
            .new_dataset::<E>()
            .shape(shape)
            .create(leaf)
            .map_err(|e| bad(&self.path, name, format!("cannot create: {e}")))?;
        if !values.is_empty() {
            dataset
                .write_raw(values)
                .map_err(|e| bad(&self.path, name, format!("cannot write: {e}")))?;
        }
        Ok(dataset)
    }

    /// A dataset of `T` values, whatever `T` is.
    pub(crate) fn typed<T: Scalar>(&self, name: &str, shape: &[usize], values: &[T]) -> Result<Dataset> {
        match T::TYPE {
            ScalarType::F64 => self.dataset::<f64>(name, shape, bytemuck::cast_slice(values)),
            ScalarType::F32 => self.dataset::<f32>(name, shape, bytemuck::cast_slice(values)),
            ScalarType::I32 => self.dataset::<i32>(name, shape, bytemuck::cast_slice(values)),
            ScalarType::I64 => self.dataset::<i64>(name, shape, bytemuck::cast_slice(values)),
            ScalarType::U32 => self.dataset::<u32>(name, shape, bytemuck::cast_slice(values)),
        }
    }

    fn int_attr(&self, name: &str, dataset: &Dataset, attr: &str, value: usize) -> Result<()> {
        let value =
            i32::try_from(value).map_err(|_| bad(&self.path, name, format!("{attr} {value} exceeds an int")))?;
        dataset
            .new_attr::<i32>()
            .shape([1])
            .create(attr)
            .and_then(|a| a.write_raw(&[value]))
            .map_err(|e| bad(&self.path, &format!("{name}/{attr}"), e.to_string()))
    }

    /// The `type` attribute: a fixed-length string of `len` bytes.
    fn type_attr(&self, name: &str, dataset: &Dataset, text: &str, len: usize) -> Result<()> {
        fn put<const N: usize>(dataset: &Dataset, text: &str) -> hdf5::Result<()> {
            let value = FixedAscii::<N>::from_ascii(text.as_bytes()).map_err(|e| hdf5::Error::from(e.to_string()))?;
            dataset.new_attr::<FixedAscii<N>>().create("type")?.write_scalar(&value)
        }
        // The lengths OP2's spellings take (see element_type.rs).
        match len {
            3 => put::<3>(dataset, text),
            5 => put::<5>(dataset, text),
            6 => put::<6>(dataset, text),
            9 => put::<9>(dataset, text),
            10 => put::<10>(dataset, text),
            12 => put::<12>(dataset, text),
            _ => Err(hdf5::Error::from(format!("no type string of {len} bytes"))),
        }
        .map_err(|e| bad(&self.path, &format!("{name}/type"), e.to_string()))
    }

    /// Set `name` of `size` elements: one integer.
    pub fn write_set_size(&self, name: &str, size: usize) -> Result<()> {
        let size = i32::try_from(size).map_err(|_| bad(&self.path, name, format!("size {size} exceeds an int")))?;
        self.dataset::<i32>(name, &[1], &[size]).map(drop)
    }

    /// Map `name`: `values.len() / dim` elements of `dim` entries.
    pub fn write_map_table(&self, name: &str, dim: usize, values: &[i32]) -> Result<()> {
        let rows = self.rows(name, dim, values.len())?;
        let dataset = self.dataset::<i32>(name, &[rows, dim], values)?;
        self.map_attrs(name, &dataset, dim, rows)
    }

    /// A Map's attributes, as OP2 writes them.
    pub(crate) fn map_attrs(&self, name: &str, dataset: &Dataset, dim: usize, rows: usize) -> Result<()> {
        self.int_attr(name, dataset, "dim", dim)?;
        self.int_attr(name, dataset, "size", rows)?;
        self.type_attr(name, dataset, "int", MAP_TYPE_LEN)
    }

    /// Dat `name`: `values.len() / dim` elements of `dim` values.
    pub fn write_dat_table<T: Scalar>(&self, name: &str, dim: usize, values: &[T]) -> Result<()> {
        let rows = self.rows(name, dim, values.len())?;
        let dataset = self.typed(name, &[rows, dim], values)?;
        self.dat_attrs::<T>(name, &dataset, dim)
    }

    /// A Dat's attributes, as OP2 writes them.
    pub(crate) fn dat_attrs<T: Scalar>(&self, name: &str, dataset: &Dataset, dim: usize) -> Result<()> {
        self.int_attr(name, dataset, "dim", dim)?;
        self.int_attr(name, dataset, "size", dim * T::TYPE.size())?;
        let text = type_name(T::TYPE);
        self.type_attr(name, dataset, text, text.len())
    }

    /// The dataset `name` if the file has one of `shape` holding `element`.
    #[cfg(feature = "mpi")]
    pub(crate) fn existing_table(&self, name: &str, shape: [usize; 2], element: ScalarType) -> Option<Dataset> {
        let d = self.file.dataset(name.trim_start_matches('/')).ok()?;
        let stored = crate::element_type::stored_type(&d.dtype().ok()?.to_descriptor().ok()?)?;
        (d.shape() == shape && stored == element).then_some(d)
    }

    /// A writer over a file opened elsewhere.
    #[cfg(feature = "mpi")]
    pub(crate) fn from_parts(file: hdf5::File, path: PathBuf) -> MeshWriter {
        MeshWriter { file, path }
    }

    /// Constant `name`: its values, at least one.
    pub fn write_constant<T: Scalar>(&self, name: &str, values: &[T]) -> Result<()> {
        if values.is_empty() {
            return Err(bad(&self.path, name, "a constant needs at least one value"));
        }
        if i32::try_from(values.len()).is_err() {
            return Err(bad(&self.path, name, format!("dim {} exceeds an int", values.len())));
        }
        let dataset = self.typed(name, &[values.len()], values)?;
        self.int_attr(name, &dataset, "dim", values.len())?;
        let text = type_name(T::TYPE);
        self.type_attr(name, &dataset, text, text.len())
    }

    /// Text `name`: a 1-D dataset of its UTF-8 bytes (op2's own objects,
    /// such as a checkpoint's description; OP2 writes none).
    pub fn write_text(&self, name: &str, text: &str) -> Result<()> {
        self.dataset::<u8>(name, &[text.len()], text.as_bytes()).map(drop)
    }

    /// Elements of a table of `len` values, `dim` each.
    fn rows(&self, name: &str, dim: usize, len: usize) -> Result<usize> {
        if dim == 0 || len % dim != 0 {
            return Err(bad(
                &self.path,
                name,
                format!("{len} values are not whole elements of dim {dim} (dim must be at least 1)"),
            ));
        }
        // OP2's attributes are ints: checked before anything is replaced,
        // so that a refused table leaves the file's old one as it was.
        for (attr, value) in [("dim", dim), ("size", len / dim), ("size", dim.saturating_mul(8))] {
            if i32::try_from(value).is_err() {
                return Err(bad(&self.path, name, format!("{attr} {value} exceeds an int")));
            }
        }
        Ok(len / dim)
    }

    /// Refuses a distributed set: this writer sees one process's part.
    fn whole(&self, object: &str, set: &Set) -> Result<()> {
        match set.distribution() {
            None => Ok(()),
            Some(_) => Err(bad(
                &self.path,
                object,
                format!(
                    "set `{}` is distributed: gather its values to one rank first (`Distributed::gather`) or write each rank's part",
                    set.name()
                ),
            )),
        }
    }

    /// Set `set`, under its name.
    pub fn set(&self, set: &Set) -> Result<()> {
        self.whole(set.name(), set)?;
        self.write_set_size(set.name(), set.size())
    }

    /// Map `map`, under its name.
    pub fn map(&self, map: &Map) -> Result<()> {
        let values = map.narrow_values("OP2's HDF5 format (32-bit maps)")?;
        self.whole(map.name(), map.from_set())?;
        self.write_map_table(map.name(), map.arity(), values)
    }

    /// Dat `dat`'s values (copied from a device first if they live there),
    /// under its name.
    pub fn dat<T: Scalar>(&self, dat: &Dat<T>) -> Result<()> {
        self.whole(dat.name(), dat.set())?;
        let values = dat.try_data_ro()?;
        self.write_dat_table(dat.name(), dat.dim(), &values[..dat.set().size() * dat.dim()])
    }
}
