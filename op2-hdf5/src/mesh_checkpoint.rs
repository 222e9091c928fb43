//! Checkpoints of mesh programs: the Sets, Maps, Dats and Globals a
//! program chooses, with the step it has reached, in one HDF5 file that
//! appears whole or not at all (`whole_file.rs`).
//!
//! The file is in OP2's layout (see the crate's header): every set, map
//! and Dat under its name, constants under theirs, so that it is also a
//! grid file. A run resumes by declaring its mesh from the checkpoint as
//! from any grid file (whole with [`MeshFile::set`], `map`, `dat`, or in
//! blocks under `mpirun`, on any number of ranks), or by filling Dats it
//! made itself with [`MeshCheckpointFile::restore`]. Beyond OP2's objects:
//!
//! | object | what |
//! |---|---|
//! | `checkpoint/format` | [`MESH_CHECKPOINT_FORMAT`], the version of this layout |
//! | `checkpoint/step` | the step the program had reached |
//! | `checkpoint/contents` | a line per object: `set NAME`, `map NAME FROM TO`, `dat NAME SET TYPE DIM`, `global NAME TYPE DIM`, `constant NAME` |
//! | `globals/<name>` | each Global's values |
//!
//! Under `mpirun`, [`MeshCheckpoint::write_across`] has every rank write
//! its own rows of every table through MPI-IO, in the global numbering
//! ([`op2_mpi::SpreadMesh`]), so that the file is the one a single process
//! would write of the same mesh.

use std::path::Path;

use op2_core::{with_scalar, Dat, Global, Map, Result, Scalar, ScalarType, Set};

use crate::reader::bad;
use crate::whole_file::{rename_when_whole, writing_name};
use crate::{MeshFile, MeshWriter};

/// The version of the layout written here; a file of another version is
/// refused.
pub const MESH_CHECKPOINT_FORMAT: i32 = 1;

/// The carriers of a mesh program to write as one checkpoint, and the step
/// it has reached (see the module's header). Build it with the methods
/// below, then [`MeshCheckpoint::write`] (or `write_across` under
/// `mpirun`). The sets of the maps and Dats chosen are written too.
pub struct MeshCheckpoint<'a> {
    step: u64,
    sets: Vec<&'a Set>,
    maps: Vec<&'a Map>,
    dats: Vec<(String, &'a dyn CheckpointedDat)>,
    /// Globals and constants: (name in the file, line in the contents,
    /// type, values).
    values: Vec<(String, String, ScalarType, Vec<u8>)>,
}

/// A Dat of any scalar type, as a checkpoint writes it.
trait CheckpointedDat {
    fn set(&self) -> &Set;
    fn dim(&self) -> usize;
    fn scalar(&self) -> ScalarType;
    /// The whole Dat under `name` (its set is not distributed).
    fn write_whole(&self, w: &MeshWriter, name: &str) -> Result<()>;
    /// This rank's block of the whole table under `name`. Collective.
    #[cfg(feature = "mpi")]
    fn write_block(&self, w: &MeshWriter, name: &str, mesh: &dyn op2_mpi::SpreadMesh) -> Result<()>;
}

impl<T: Scalar> CheckpointedDat for Dat<T> {
    fn set(&self) -> &Set {
        Dat::set(self)
    }

    fn dim(&self) -> usize {
        Dat::dim(self)
    }

    fn scalar(&self) -> ScalarType {
        T::TYPE
    }

    fn write_whole(&self, w: &MeshWriter, name: &str) -> Result<()> {
        let values = self.try_data_ro()?;
        w.write_dat_table(name, self.dim(), &values[..self.set().size() * self.dim()])
    }

    #[cfg(feature = "mpi")]
    fn write_block(&self, w: &MeshWriter, name: &str, mesh: &dyn op2_mpi::SpreadMesh) -> Result<()> {
        let block = op2_mpi::dat_to_blocks(mesh, self)?;
        let (rank, ranks) = mesh.rank_and_size();
        let total = mesh.numbering(self.set())?.global_size;
        let rows = op2_mpi::block_rows(total, rank as u32, ranks as u32);
        w.write_dat_rows(name, self.dim(), total, rows, &block)
    }
}

impl<'a> MeshCheckpoint<'a> {
    /// A checkpoint of a program that has run `step` steps (iterations,
    /// time steps: whatever it counts), holding nothing yet.
    pub fn new(step: u64) -> MeshCheckpoint<'a> {
        MeshCheckpoint {
            step,
            sets: Vec::new(),
            maps: Vec::new(),
            dats: Vec::new(),
            values: Vec::new(),
        }
    }

    /// Adds `set` (its size).
    pub fn set(mut self, set: &'a Set) -> Self {
        if !self.sets.iter().any(|s| s.same(set)) {
            self.sets.push(set);
        }
        self
    }

    /// Adds `map` (its table) and its two sets.
    pub fn map(mut self, map: &'a Map) -> Self {
        self = self.set(map.from_set()).set(map.to_set());
        self.maps.push(map);
        self
    }

    /// Adds `dat` under its own name, and its set.
    pub fn dat<T: Scalar>(self, dat: &'a Dat<T>) -> Self {
        self.dat_as(dat.name(), dat)
    }

    /// Adds `dat` under `name` (OP2's `p_q` for a Dat called `q`, say),
    /// and its set.
    pub fn dat_as<T: Scalar>(mut self, name: impl Into<String>, dat: &'a Dat<T>) -> Self {
        self = self.set(dat.set());
        self.dats.push((name.into(), dat));
        self
    }

    /// Adds `global`'s values as they are now (`globals/<its name>`).
    ///
    /// # Errors
    /// As [`Global::try_data_ro`] (a value still on a device that cannot
    /// be read back).
    pub fn global<T: Scalar>(mut self, global: &Global<T>) -> Result<Self> {
        let values = global.try_data_ro()?;
        let line = format!("global {} {} {}", global.name(), T::TYPE.rust_name(), global.dim());
        let name = format!("globals/{}", global.name());
        self.values.push((name, line, T::TYPE, bytemuck_bytes(&values[..])));
        Ok(self)
    }

    /// Adds the constant `name` (at least one value), as OP2 stores its
    /// `op_decl_const`s.
    pub fn constant<T: Scalar>(mut self, name: impl Into<String>, values: &[T]) -> Self {
        let name = name.into();
        let line = format!("constant {name}");
        self.values.push((name, line, T::TYPE, bytemuck_bytes(values)));
        self
    }

    /// The `checkpoint/contents` text, after checking that no two objects
    /// share a name and none takes one of the checkpoint's own.
    fn contents(&self, path: &Path) -> Result<String> {
        let mut lines = Vec::new();
        let mut names: Vec<String> = Vec::new();
        let mut name = |n: &str, line: String| -> Result<()> {
            if names.iter().any(|m| m == n) {
                return Err(bad(path, n, "two objects of the checkpoint have this name"));
            }
            if n.is_empty() || n.contains(char::is_whitespace) {
                return Err(bad(path, n, "a checkpoint's object needs a name without spaces"));
            }
            // HDF5 reads `/a`, `a//b` and `a/./b` as `a`, `a/b` and `a/b`:
            // two names of the checkpoint would be one object.
            if n.split('/').any(|part| part.is_empty() || part == "." || part == "..") {
                return Err(bad(
                    path,
                    n,
                    "a checkpoint's object name is groups and a name joined by single `/`s, none `.` or `..`",
                ));
            }
            // An object that is another's group: writing one replaces the other.
            let within = |outer: &str, inner: &str| inner.starts_with(&format!("{outer}/"));
            if let Some(m) = names.iter().find(|m| within(m, n) || within(n, m)) {
                return Err(bad(
                    path,
                    n,
                    format!("the checkpoint's object `{m}` would be in this one, or this one in it"),
                ));
            }
            let own = |prefix: &str| n == prefix || n.starts_with(&format!("{prefix}/"));
            if own("checkpoint") || (own("globals") && !line.starts_with("global ")) {
                return Err(bad(
                    path,
                    n,
                    "the names `checkpoint` and `globals` are the checkpoint's own",
                ));
            }
            names.push(n.to_string());
            lines.push(line);
            Ok(())
        };
        for s in &self.sets {
            name(s.name(), format!("set {}", s.name()))?;
        }
        for m in &self.maps {
            let line = format!("map {} {} {}", m.name(), m.from_set().name(), m.to_set().name());
            name(m.name(), line)?;
        }
        for (n, d) in &self.dats {
            let line = format!("dat {n} {} {} {}", d.set().name(), d.scalar().rust_name(), d.dim());
            name(n, line)?;
        }
        for (n, line, ..) in &self.values {
            name(n, line.clone())?;
        }
        Ok(lines.join("\n"))
    }

    /// Everything but the tables.
    fn write_description(&self, w: &MeshWriter, size: impl Fn(&Set) -> Result<usize>) -> Result<()> {
        w.write_constant::<i32>("checkpoint/format", &[MESH_CHECKPOINT_FORMAT])?;
        let step = i64::try_from(self.step).map_err(|_| {
            bad(
                w.path(),
                "checkpoint/step",
                format!("step {} is past i64::MAX", self.step),
            )
        })?;
        w.write_constant::<i64>("checkpoint/step", &[step])?;
        w.write_text("checkpoint/contents", &self.contents(w.path())?)?;
        for s in &self.sets {
            w.write_set_size(s.name(), size(s)?)?;
        }
        for (name, _, scalar, bytes) in &self.values {
            with_scalar!(*scalar, T => w.write_constant::<T>(name, &from_bytes::<T>(bytes))?);
        }
        Ok(())
    }

    /// Writes the checkpoint to `path` (replacing any file there, only once
    /// the new one is whole), by this process alone.
    ///
    /// # Errors
    /// [`Error::MeshFile`](op2_core::Error::MeshFile) naming the object if two share a name, a set is
    /// distributed (use [`MeshCheckpoint::write_across`]) or the file
    /// cannot be written; as [`Dat::try_data_ro`].
    pub fn write(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        self.contents(path)?;
        if let Some(s) = self.sets.iter().find(|s| s.distribution().is_some()) {
            return Err(bad(
                path,
                s.name(),
                "is distributed: write the checkpoint with every rank (MeshCheckpoint::write_across)",
            ));
        }
        let writing = writing_name(path);
        let written = (|| {
            let w = MeshWriter::create(&writing)?;
            self.write_description(&w, |s| Ok(s.size()))?;
            for m in &self.maps {
                w.map(m)?;
            }
            for (name, d) in &self.dats {
                d.write_whole(&w, name)?;
            }
            w.finish()
        })();
        rename_when_whole(written, &writing, path)
    }

    /// Writes the checkpoint of a mesh spread over the ranks of `mpi`
    /// (`mesh`: the [`op2_mpi::Distributed`] or
    /// [`op2_mpi::BlockDistributed`] the carriers are local parts of):
    /// every rank writes its owned rows of every table, in the global
    /// numbering. Collective: every rank calls it with the same objects,
    /// and all return the same success or failure.
    ///
    /// # Errors
    /// As [`MeshCheckpoint::write`], on any rank; [`Error::Mpi`](op2_core::Error::Mpi) if a set
    /// is not one of `mesh`'s.
    #[cfg(feature = "mpi")]
    pub fn write_across(
        &self,
        path: impl AsRef<Path>,
        mesh: &dyn op2_mpi::SpreadMesh,
        mpi: &op2_mpi::Mpi,
    ) -> Result<()> {
        use crate::whole_file::agree;
        let path = path.as_ref();
        let rank = mpi.rank();
        let writing = writing_name(path);
        let described = match rank {
            0 => MeshWriter::create(&writing).and_then(|w| {
                self.write_description(&w, |s| Ok(mesh.numbering(s)?.global_size))?;
                w.finish()
            }),
            _ => self.contents(path).map(drop),
        };
        let remove = |e| {
            if rank == 0 {
                let _ = std::fs::remove_file(&writing);
            }
            e
        };
        agree(mpi, path, described, "described the checkpoint").map_err(remove)?;
        let written = MeshWriter::append_parallel(&writing, mpi).and_then(|w| {
            // Making each table is collective. Moving rows agrees on every
            // failure (every rank gets it and skips the table alike); a
            // rank whose write of its rows failed goes on with the others'
            // tables and reports its first failure.
            let mut first = Ok(());
            for m in &self.maps {
                let rows = (|| {
                    let block = op2_mpi::map_to_blocks(mesh, m)?;
                    let total = mesh.numbering(m.from_set())?.global_size;
                    Ok((block, total))
                })();
                let r = rows.and_then(|(block, total)| {
                    let rows = op2_mpi::block_rows(total, rank as u32, mpi.size() as u32);
                    w.write_map_rows(m.name(), m.arity(), total, rows, &block)
                });
                first = first.and(r);
            }
            for (name, d) in &self.dats {
                first = first.and(d.write_block(&w, name, mesh));
            }
            first.and(w.finish())
        });
        agree(mpi, path, written, "wrote its rows").map_err(remove)?;
        let renamed = match rank {
            0 => rename_when_whole(Ok(()), &writing, path),
            _ => Ok(()),
        };
        agree(mpi, path, renamed, "renamed the file")
    }
}

/// A checkpoint read back (see the module's header).
pub struct MeshCheckpointFile {
    file: MeshFile,
    step: u64,
    contents: Vec<String>,
}

impl MeshCheckpointFile {
    /// Opens the checkpoint at `path` for this process alone.
    ///
    /// # Errors
    /// [`Error::MeshFile`](op2_core::Error::MeshFile) naming the file and object if it cannot be read,
    /// is not a checkpoint (a grid file, say) or is of another layout
    /// version.
    pub fn open(path: impl AsRef<Path>) -> Result<MeshCheckpointFile> {
        MeshCheckpointFile::from_file(MeshFile::open(path)?)
    }

    /// Opens the checkpoint at `path` on every rank at once through MPI-IO
    /// (collective), so that each reads only the rows it asks for
    /// ([`MeshFile::block_set`] and the others, through
    /// [`MeshCheckpointFile::file`]).
    ///
    /// # Errors
    /// As [`MeshCheckpointFile::open`].
    #[cfg(feature = "mpi")]
    pub fn open_parallel(path: impl AsRef<Path>, mpi: &op2_mpi::Mpi) -> Result<MeshCheckpointFile> {
        MeshCheckpointFile::from_file(MeshFile::open_parallel(path, mpi)?)
    }

    fn from_file(file: MeshFile) -> Result<MeshCheckpointFile> {
        if file.contains("checkpoint/model") {
            return Err(bad(
                file.path(),
                "checkpoint/model",
                "the file is a model-layer simulation's checkpoint: resume it with op2::model::Checkpoints",
            ));
        }
        if !file.contains("checkpoint/format") {
            return Err(bad(
                file.path(),
                "checkpoint/format",
                "missing: the file is not a checkpoint (a grid file, say)",
            ));
        }
        let format = file.constant::<i32>("checkpoint/format")?;
        if format != [MESH_CHECKPOINT_FORMAT] {
            return Err(bad(
                file.path(),
                "checkpoint/format",
                format!("is {format:?}: this op2 reads version {MESH_CHECKPOINT_FORMAT} only"),
            ));
        }
        let step = match file.constant::<i64>("checkpoint/step")?[..] {
            [s] if s >= 0 => s as u64,
            ref s => return Err(bad(file.path(), "checkpoint/step", format!("is {s:?}, not one count"))),
        };
        let contents = file.text("checkpoint/contents")?.lines().map(str::to_string).collect();
        Ok(MeshCheckpointFile { file, step, contents })
    }

    /// The step the program had reached.
    pub fn step(&self) -> u64 {
        self.step
    }

    /// The file, to declare the mesh from as from any grid file.
    pub fn file(&self) -> &MeshFile {
        &self.file
    }

    /// The checkpoint's contents, a line per object (see the module's
    /// header).
    pub fn contents(&self) -> &[String] {
        &self.contents
    }

    /// The contents line of the object `name` of `kind`.
    fn line(&self, kind: &str, name: &str) -> Result<Vec<&str>> {
        self.contents
            .iter()
            .map(|l| l.split(' ').collect::<Vec<_>>())
            .find(|w| w.len() >= 2 && w[0] == kind && w[1] == name)
            .ok_or_else(|| {
                let held: Vec<&str> = self
                    .contents
                    .iter()
                    .filter_map(|l| l.strip_prefix(kind).and_then(|r| r.strip_prefix(' ')))
                    .map(|r| r.split(' ').next().unwrap_or(""))
                    .collect();
                bad(
                    self.file.path(),
                    name,
                    format!(
                        "the checkpoint holds no {kind} of this name (its {kind}s: {})",
                        held.join(", ")
                    ),
                )
            })
    }

    /// Fills `dat` with the values the checkpoint holds under its name.
    ///
    /// # Errors
    /// As [`MeshCheckpointFile::restore_as`].
    pub fn restore<T: Scalar>(&self, dat: &Dat<T>) -> Result<()> {
        self.restore_as(dat.name(), dat)
    }

    /// Fills `dat` with the values the checkpoint holds under `name`. The
    /// Dat must be whole (not a rank's part: restore the whole Dat, then
    /// take its part, or declare the Dat from the file in blocks).
    ///
    /// # Errors
    /// [`Error::MeshFile`](op2_core::Error::MeshFile) naming the object if the checkpoint has no Dat
    /// `name`, or it is on a set of another name or size, of another type
    /// or dim; if `dat`'s set is distributed.
    pub fn restore_as<T: Scalar>(&self, name: &str, dat: &Dat<T>) -> Result<()> {
        let path = self.file.path();
        if dat.set().distribution().is_some() {
            return Err(bad(
                path,
                name,
                format!(
                    "Dat `{}` is a rank's part: restore the whole Dat and distribute it, or declare it from the checkpoint in blocks",
                    dat.name()
                ),
            ));
        }
        let line = self.line("dat", name)?;
        let want = [
            dat.set().name().to_string(),
            T::TYPE.rust_name().to_string(),
            dat.dim().to_string(),
        ];
        let held = line
            .get(2..5)
            .map(|w| w.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        if held.as_deref() != Some(&want[..]) {
            return Err(bad(
                path,
                name,
                format!(
                    "the checkpoint holds it as `{}`, restored into a Dat on `{}` of {} × {}",
                    line.join(" "),
                    want[0],
                    want[2],
                    want[1]
                ),
            ));
        }
        let size = self.file.set_size(dat.set().name())?;
        if size != dat.set().size() {
            return Err(bad(
                path,
                dat.set().name(),
                format!("has {size} elements in the checkpoint, {} in the run", dat.set().size()),
            ));
        }
        // The table itself, not only its contents line, must fit.
        let table = self.file.dat_table(name)?;
        if (table.rows, table.dim) != (size, dat.dim()) {
            return Err(bad(
                path,
                name,
                format!(
                    "the table is {} rows of {}, its contents line says {size} of {}",
                    table.rows,
                    table.dim,
                    dat.dim()
                ),
            ));
        }
        let values = self.file.read_dat_rows::<T>(name, 0..size)?;
        dat.try_data_mut()?[..values.len()].copy_from_slice(&values);
        Ok(())
    }

    /// Sets `global` to the values the checkpoint holds for it.
    ///
    /// # Errors
    /// [`Error::MeshFile`](op2_core::Error::MeshFile) if the checkpoint has no Global of its name, or
    /// holds it with another type or dim.
    pub fn restore_global<T: Scalar>(&self, global: &Global<T>) -> Result<()> {
        let line = self.line("global", global.name())?;
        let name = format!("globals/{}", global.name());
        let dim = global.dim().to_string();
        if line.get(2..4) != Some(&[T::TYPE.rust_name(), dim.as_str()][..]) {
            return Err(bad(
                self.file.path(),
                &name,
                format!(
                    "the checkpoint holds `{}`, restored into {} × {}",
                    line.join(" "),
                    global.dim(),
                    T::TYPE.rust_name()
                ),
            ));
        }
        let values = self.file.constant::<T>(&name)?;
        if values.len() != global.dim() {
            return Err(bad(
                self.file.path(),
                &name,
                format!("holds {} values, its contents line says {}", values.len(), global.dim()),
            ));
        }
        global.try_data_mut()?.copy_from_slice(&values);
        Ok(())
    }
}

/// The bytes of `values`.
fn bytemuck_bytes<T: Scalar>(values: &[T]) -> Vec<u8> {
    bytemuck::cast_slice(values).to_vec()
}

/// Values of `T` from their bytes (which need not be aligned).
fn from_bytes<T: Scalar>(bytes: &[u8]) -> Vec<T> {
    bytes
        .chunks_exact(std::mem::size_of::<T>())
        .map(bytemuck::pod_read_unaligned)
        .collect()
}
