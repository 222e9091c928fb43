//! Reading OP2's HDF5 layout: Set sizes, Map and Dat tables (whole or a
//! block of rows) and constants, each checked against what the layout
//! promises before a value is used.

use std::any::Any;
use std::ops::Range;
use std::path::{Path, PathBuf};

use hdf5::dataset::Layout;
use hdf5::types::FixedAscii;
use hdf5::{Dataset, H5Type};
use op2_core::{Dat, Error, Map, Result, Scalar, ScalarType, Set};

use crate::element_type::{parse_type_name, stored_type, type_name};

/// The largest size of a set: op2 sets and map entries are `i32`.
const MAX_SIZE: u64 = i32::MAX as u64;

/// The table of a Map or Dat in a file: `rows` elements of `dim` values of
/// type `element` each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Table {
    /// Elements (the first dimension; a Map's from-set size).
    pub rows: usize,
    /// Values per element (the second dimension; a Map's arity).
    pub dim: usize,
    /// The values' type.
    pub element: ScalarType,
}

/// An HDF5 file in OP2's layout, open for reading. Names may hold groups
/// (`group3/pedge_test`); objects the caller does not ask for are never
/// looked at.
pub struct MeshFile {
    file: hdf5::File,
    path: PathBuf,
}

/// What one object of `path` must be: builds the error naming both.
pub(crate) fn bad(path: &Path, object: &str, reason: impl Into<String>) -> Error {
    Error::mesh_file(path, object, reason)
}

/// `Vec<A>` as `Vec<B>` where both are the same type (a dispatch on
/// [`Scalar::TYPE`] chose `A` for `B`).
fn same_vec<A: 'static, B: 'static>(values: Vec<A>) -> Vec<B> {
    match (Box::new(values) as Box<dyn Any>).downcast::<Vec<B>>() {
        Ok(v) => *v,
        Err(_) => unreachable!("Scalar::TYPE names the type itself"),
    }
}

/// Reads rows `rows` of the 2-D `dataset`, or the whole of a 1-D one when
/// `rows` is `None`, as `T` (whose type the caller checked against the
/// stored one: HDF5 would convert silently).
fn read_as<T: Scalar>(dataset: &Dataset, rows: Option<Range<usize>>) -> hdf5::Result<Vec<T>> {
    fn typed<E: H5Type>(dataset: &Dataset, rows: Option<Range<usize>>) -> hdf5::Result<Vec<E>> {
        match rows {
            None => dataset.read_raw::<E>(),
            Some(rows) if rows.is_empty() => Ok(Vec::new()),
            Some(rows) => Ok(dataset.read_slice_2d::<E, _>((rows, ..))?.into_raw_vec_and_offset().0),
        }
    }
    Ok(match T::TYPE {
        ScalarType::F64 => same_vec(typed::<f64>(dataset, rows)?),
        ScalarType::F32 => same_vec(typed::<f32>(dataset, rows)?),
        ScalarType::I32 => same_vec(typed::<i32>(dataset, rows)?),
        ScalarType::I64 => same_vec(typed::<i64>(dataset, rows)?),
        ScalarType::U32 => same_vec(typed::<u32>(dataset, rows)?),
    })
}

/// The most bytes one allocation can have here: the machine's memory and
/// swap (`/proc/meminfo`; what Linux's default overcommit refuses beyond),
/// or `None` where that is not known.
fn memory_limit() -> Option<u64> {
    static LIMIT: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        let text = std::fs::read_to_string("/proc/meminfo").ok()?;
        let kib = |key: &str| -> Option<u64> {
            let line = text.lines().find(|l| l.starts_with(key))?;
            line[key.len()..].trim().trim_end_matches("kB").trim().parse().ok()
        };
        Some((kib("MemTotal:")? + kib("SwapTotal:").unwrap_or(0)) * 1024)
    })
}

impl MeshFile {
    /// Opens `path` for reading by this process alone.
    pub fn open(path: impl AsRef<Path>) -> Result<MeshFile> {
        let path = path.as_ref().to_path_buf();
        // No lock: HDF5 locks through the file descriptor, which a child
        // process another thread forks (a JIT's compiler) inherits and
        // keeps after the file is closed, so that a file just written
        // could not be opened again. op2 never shares a file being written.
        let file = hdf5::File::with_options()
            .with_fapl(|p| p.file_locking(false))
            .open(&path)
            .map_err(|e| bad(&path, "/", format!("cannot open as HDF5: {e}")))?;
        Ok(MeshFile { file, path })
    }

    /// Opens `path` on every rank at once through MPI-IO (collective: every
    /// rank calls it), so that each rank reads only the rows it asks for.
    #[cfg(feature = "mpi")]
    pub fn open_parallel(path: impl AsRef<Path>, _mpi: &op2_mpi::Mpi) -> Result<MeshFile> {
        let path = path.as_ref().to_path_buf();
        // `Mpi` holds MPI_COMM_WORLD: its existence says MPI is initialised.
        // SAFETY: reading the handle of the world communicator.
        let world = unsafe { mpi::ffi::RSMPI_COMM_WORLD };
        // `mpio` duplicates the communicator; that fails only where MPI
        // itself does, and MPI's errors abort the run.
        let file = hdf5::File::with_options()
            .with_fapl(|p| p.mpio(world, None))
            .open(&path)
            .map_err(|e| bad(&path, "/", format!("cannot open as HDF5 through MPI-IO: {e}")))?;
        Ok(MeshFile { file, path })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the file has an object called `name`.
    pub fn contains(&self, name: &str) -> bool {
        // A name with groups exists only if each of its groups does.
        let mut prefix = String::new();
        name.split('/').filter(|p| !p.is_empty()).all(|part| {
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(part);
            self.file.link_exists(&prefix)
        })
    }

    fn bad(&self, object: &str, reason: impl Into<String>) -> Error {
        bad(&self.path, object, reason)
    }

    fn dataset(&self, name: &str, what: &str) -> Result<Dataset> {
        if !self.contains(name) {
            return Err(self.bad(name, format!("no such {what} in the file")));
        }
        self.file
            .dataset(name)
            .map_err(|e| self.bad(name, format!("not a dataset ({what} expected): {e}")))
    }

    /// That `values` values of `T` can be read from `dataset`: the file
    /// holds what the dataset declares, and this process can hold them. A
    /// header may promise 2^40 values in a file of a few bytes (chunks that
    /// were never written read as zeros); HDF5 allocates for a read first and
    /// the process would abort where the memory cannot be had.
    fn readable<T>(&self, name: &str, dataset: &Dataset, values: usize) -> Result<()> {
        let bytes = values
            .checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| self.bad(name, format!("{values} values are more than this machine can address")))?;
        self.stored_whole(name, dataset)?;
        // Compared, not reserved: a reservation freed again raises glibc's
        // threshold for mapping large blocks, and the reads after it then
        // kept 10-20 MiB more of the heap (Airfoil's 720K grid).
        match memory_limit() {
            Some(limit) if bytes as u64 > limit => Err(Error::HostOutOfMemory {
                name: format!("{}: {name}", self.path.display()),
                bytes,
            }),
            _ => Ok(()),
        }
    }

    /// That the file stores every byte `dataset` declares, where its bytes
    /// are stored as they are (no filter compresses them, no external file
    /// holds them): what a file that was written whole holds.
    fn stored_whole(&self, name: &str, dataset: &Dataset) -> Result<()> {
        let create = dataset
            .dcpl()
            .map_err(|e| self.bad(name, format!("unreadable creation properties: {e}")))?;
        let plain = matches!(create.layout(), Layout::Contiguous | Layout::Chunked)
            && create.filters().is_empty()
            && create.external().is_empty();
        if !plain {
            return Ok(());
        }
        let element = dataset
            .dtype()
            .map_err(|e| self.bad(name, format!("unreadable element type: {e}")))?
            .size() as u64;
        let declared = (dataset.size() as u64).saturating_mul(element);
        let stored = dataset.storage_size();
        match stored < declared {
            true => Err(self.bad(
                name,
                format!(
                    "declares {declared} bytes of values ({:?} of {element} bytes) but the file stores {stored}: it was not written whole",
                    dataset.shape()
                ),
            )),
            false => Ok(()),
        }
    }

    /// The element type `dataset` is stored as.
    fn stored(&self, name: &str, dataset: &Dataset) -> Result<ScalarType> {
        let descriptor = dataset
            .dtype()
            .and_then(|t| t.to_descriptor())
            .map_err(|e| self.bad(name, format!("unreadable element type: {e}")))?;
        stored_type(&descriptor).ok_or_else(|| {
            self.bad(
                name,
                format!(
                    "stored as {descriptor}, which op2 has no type for (double, float, int, long long, unsigned int)"
                ),
            )
        })
    }

    /// The one integer of attribute `attr` of `name`.
    fn int_attr(&self, name: &str, dataset: &Dataset, attr: &str) -> Result<i64> {
        let object = format!("{name}/{attr}");
        let a = dataset.attr(attr).map_err(|_| self.bad(&object, "missing attribute"))?;
        let descriptor = a.dtype().and_then(|t| t.to_descriptor());
        if !matches!(
            descriptor,
            Ok(hdf5::types::TypeDescriptor::Integer(_) | hdf5::types::TypeDescriptor::Unsigned(_))
        ) {
            return Err(self.bad(&object, "expected an integer attribute"));
        }
        if a.size() != 1 {
            return Err(self.bad(&object, format!("expected one integer, found {}", a.size())));
        }
        let values = a
            .read_raw::<i64>()
            .map_err(|e| self.bad(&object, format!("unreadable: {e}")))?;
        match values[..] {
            [v] => Ok(v),
            _ => Err(self.bad(&object, format!("expected one integer, found {}", values.len()))),
        }
    }

    /// The element type the `type` attribute of `name` names, checked
    /// against the stored one.
    fn type_attr(&self, name: &str, dataset: &Dataset) -> Result<ScalarType> {
        let object = format!("{name}/type");
        let a = dataset
            .attr("type")
            .map_err(|_| self.bad(&object, "missing attribute"))?;
        if a.size() != 1 {
            return Err(self.bad(&object, format!("expected one string, found {}", a.size())));
        }
        let text = a
            .read_raw::<FixedAscii<64>>()
            .ok()
            .and_then(|v| v.first().map(|s| s.as_str().to_string()))
            .ok_or_else(|| self.bad(&object, "expected a fixed-length string such as \"double\""))?;
        let named = parse_type_name(&text).ok_or_else(|| {
            self.bad(
                &object,
                format!("unknown type {text:?} (expected double, float, int, long long or unsigned int)"),
            )
        })?;
        let stored = self.stored(name, dataset)?;
        if stored != named {
            return Err(self.bad(
                name,
                format!(
                    "the type attribute says {:?} but the data are stored as {}",
                    text.trim_end_matches('\0'),
                    type_name(stored)
                ),
            ));
        }
        Ok(named)
    }

    /// A size or count read from the file, checked to fit an op2 set.
    fn size(&self, object: &str, value: i64) -> Result<usize> {
        match u64::try_from(value) {
            Ok(v) if v <= MAX_SIZE => Ok(v as usize),
            _ => Err(self.bad(object, format!("{value} is not a set size (0 to {MAX_SIZE})"))),
        }
    }

    /// The size of set `name`: a dataset of one integer.
    pub fn set_size(&self, name: &str) -> Result<usize> {
        let dataset = self.dataset(name, "set")?;
        if dataset.size() != 1 {
            return Err(self.bad(name, format!("a set is one integer, found shape {:?}", dataset.shape())));
        }
        if !matches!(
            self.stored(name, &dataset)?,
            ScalarType::I32 | ScalarType::I64 | ScalarType::U32
        ) {
            return Err(self.bad(name, "a set's size must be an integer"));
        }
        let value = dataset
            .read_raw::<i64>()
            .map_err(|e| self.bad(name, format!("unreadable: {e}")))?[0];
        self.size(name, value)
    }

    /// The table of a Map or Dat: a 2-D dataset `[rows][dim]` whose `dim`
    /// attribute is its second dimension and whose `type` attribute names
    /// how it is stored.
    fn table(&self, name: &str, what: &str) -> Result<(Dataset, Table)> {
        let dataset = self.dataset(name, what)?;
        let shape = dataset.shape();
        let [rows, dim] = shape[..] else {
            return Err(self.bad(
                name,
                format!("a {what} is a 2-D dataset [size][dim], found shape {shape:?}"),
            ));
        };
        let rows = self.size(name, rows as i64)?;
        let stated = self.int_attr(name, &dataset, "dim")?;
        if stated != dim as i64 || dim == 0 {
            return Err(self.bad(
                &format!("{name}/dim"),
                format!("says {stated} but the dataset has {dim} values per element (shape {shape:?}); dim must be at least 1"),
            ));
        }
        let element = self.type_attr(name, &dataset)?;
        Ok((dataset, Table { rows, dim, element }))
    }

    /// The table of Map `name`: integers, whose `size` attribute is its
    /// from-set size.
    pub fn map_table(&self, name: &str) -> Result<Table> {
        let (dataset, table) = self.table(name, "map")?;
        if table.element != ScalarType::I32 {
            return Err(self.bad(name, format!("a map holds int, not {}", type_name(table.element))));
        }
        let size = self.int_attr(name, &dataset, "size")?;
        if size != table.rows as i64 {
            return Err(self.bad(
                &format!("{name}/size"),
                format!("says {size} elements but the dataset has {}", table.rows),
            ));
        }
        Ok(table)
    }

    /// The table of Dat `name`, whose `size` attribute is the bytes of one
    /// element (dim values).
    pub fn dat_table(&self, name: &str) -> Result<Table> {
        let (dataset, table) = self.table(name, "dat")?;
        let size = self.int_attr(name, &dataset, "size")?;
        let bytes = table.dim * table.element.size();
        if size != bytes as i64 {
            return Err(self.bad(
                &format!("{name}/size"),
                format!(
                    "says {size} bytes per element but {} values of {} take {bytes}",
                    table.dim,
                    type_name(table.element)
                ),
            ));
        }
        Ok(table)
    }

    /// That what `name` holds, `element`, is what it is read as, `T`.
    fn holds<T: Scalar>(&self, name: &str, element: ScalarType) -> Result<()> {
        match element == T::TYPE {
            true => Ok(()),
            false => Err(self.bad(
                name,
                format!("holds {}, read as {}", type_name(element), type_name(T::TYPE)),
            )),
        }
    }

    /// Rows `rows` of a table, checked to lie inside it.
    fn rows<T: Scalar>(&self, name: &str, table: Table, rows: Range<usize>) -> Result<Vec<T>> {
        if rows.start > rows.end || rows.end > table.rows {
            return Err(self.bad(
                name,
                format!(
                    "rows {}..{} asked for, the dataset has {}",
                    rows.start, rows.end, table.rows
                ),
            ));
        }
        let dataset = self.dataset(name, "table")?;
        self.readable::<T>(name, &dataset, rows.len().saturating_mul(table.dim))?;
        read_as::<T>(&dataset, Some(rows)).map_err(|e| self.bad(name, format!("unreadable: {e}")))
    }

    /// Rows `rows` of Map `name` (`dim` values each, element-major).
    pub fn read_map_rows(&self, name: &str, rows: Range<usize>) -> Result<Vec<i32>> {
        let table = self.map_table(name)?;
        self.rows(name, table, rows)
    }

    /// Rows `rows` of Dat `name` (`dim` values each, element-major), whose
    /// values must be `T`.
    pub fn read_dat_rows<T: Scalar>(&self, name: &str, rows: Range<usize>) -> Result<Vec<T>> {
        let table = self.dat_table(name)?;
        self.holds::<T>(name, table.element)?;
        self.rows(name, table, rows)
    }

    /// Constant `name`: a 1-D dataset of `dim` values of type `T`.
    pub fn constant<T: Scalar>(&self, name: &str) -> Result<Vec<T>> {
        let dataset = self.dataset(name, "constant")?;
        let shape = dataset.shape();
        if shape.len() != 1 || shape[0] == 0 {
            return Err(self.bad(
                name,
                format!("a constant is a 1-D dataset [dim], found shape {shape:?}"),
            ));
        }
        let dim = self.int_attr(name, &dataset, "dim")?;
        if dim != shape[0] as i64 {
            return Err(self.bad(
                &format!("{name}/dim"),
                format!("says {dim} but the dataset holds {}", shape[0]),
            ));
        }
        self.holds::<T>(name, self.type_attr(name, &dataset)?)?;
        self.readable::<T>(name, &dataset, shape[0])?;
        read_as::<T>(&dataset, None).map_err(|e| self.bad(name, format!("unreadable: {e}")))
    }

    /// Text `name`, as [`MeshWriter::write_text`](crate::MeshWriter::write_text)
    /// writes it: a 1-D dataset of UTF-8 bytes.
    pub fn text(&self, name: &str) -> Result<String> {
        let dataset = self.dataset(name, "text")?;
        let descriptor = dataset.dtype().and_then(|t| t.to_descriptor());
        if dataset.ndim() != 1
            || !matches!(
                descriptor,
                Ok(hdf5::types::TypeDescriptor::Unsigned(hdf5::types::IntSize::U1))
            )
        {
            return Err(self.bad(name, "text is a 1-D dataset of bytes"));
        }
        self.readable::<u8>(name, &dataset, dataset.size())?;
        let bytes = dataset
            .read_raw::<u8>()
            .map_err(|e| self.bad(name, format!("unreadable: {e}")))?;
        String::from_utf8(bytes).map_err(|_| self.bad(name, "the text is not UTF-8"))
    }

    /// Set `name` as an op2 [`Set`] of that name.
    pub fn set(&self, name: &str) -> Result<Set> {
        Set::new(name, self.set_size(name)?)
    }

    /// Map `name` from `from` to `to`, whole: its size must be `from`'s and
    /// every entry an element of `to`.
    pub fn map(&self, name: &str, from: &Set, to: &Set) -> Result<Map> {
        let table = self.map_table(name)?;
        if table.rows != from.size() {
            return Err(self.bad(
                name,
                format!(
                    "maps {} elements but set `{}` has {}",
                    table.rows,
                    from.name(),
                    from.size()
                ),
            ));
        }
        let values: Vec<i32> = self.rows(name, table, 0..table.rows)?;
        if let Some(k) = values.iter().position(|&v| v < 0 || v as usize >= to.size()) {
            return Err(self.bad(
                name,
                format!(
                    "element {} maps to {}, not an element of set `{}` (0 to {})",
                    k / table.dim,
                    values[k],
                    to.name(),
                    to.size().saturating_sub(1)
                ),
            ));
        }
        Map::new(name, from, to, table.dim, values)
    }

    /// Dat `name` on `set`, whole: its size must be `set`'s and its values
    /// of type `T`.
    pub fn dat<T: Scalar>(&self, name: &str, set: &Set) -> Result<Dat<T>> {
        let table = self.dat_table(name)?;
        if table.rows != set.size() {
            return Err(self.bad(
                name,
                format!(
                    "holds {} elements but set `{}` has {}",
                    table.rows,
                    set.name(),
                    set.size()
                ),
            ));
        }
        self.holds::<T>(name, table.element)?;
        let values = self.rows(name, table, 0..table.rows)?;
        Dat::from_vec(name, set, table.dim, values)
    }
}
