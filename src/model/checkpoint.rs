//! Checkpoints: a simulation's [`Snapshot`] in one HDF5 file, written so
//! that a crash never leaves a broken file under the checkpoint's name
//! (written to `<name>.writing`, then renamed), and read back by a
//! simulation of the same model on any rank count, which then ends bit for
//! bit where the uninterrupted run ends.
//!
//! The file (feature `hdf5`; tables in OP2's layout, see `op2::hdf5`):
//!
//! | object | what |
//! |---|---|
//! | `checkpoint/format` | [`CHECKPOINT_FORMAT`], the version of this layout |
//! | `checkpoint/model`, `checkpoint/layout` | the model's name and [`Model::layout`], as text |
//! | `checkpoint/steps` | steps run |
//! | `agents/<type>/count` | its agents, over every rank |
//! | `agents/<type>/counters` | its random streams' seed and loops, and its next child's id |
//! | `agents/<type>/ids` | a table of the agents' ids (one per row) |
//! | `agents/<type>/variables/<variable>` | a table of the variable's values, row by row as the ids |
//! | `agents/<type>/states` | a table of each agent's state, for a type with states |
//! | `environment/<property>` | each property's values |
//! | `networks/<network>` | a table of its edges, a pair of ids per row |
//!
//! Under `mpirun` every rank writes its own rows of each table through
//! MPI-IO ([`Checkpoints::checkpoint_across`]), and on resuming
//! ([`Checkpoints::resume_across`]) reads a block of the rows of each
//! type that moves, or every row of a network's type (a network is given
//! whole to every rank, then cut); `Simulation::distribute` then places
//! them. Everything read is checked: a file of another model or layout
//! version, or cut short, is refused with an error naming the file and
//! what differs.

use std::path::{Path, PathBuf};

#[cfg(feature = "mpi")]
use op2_hdf5::agree;
use op2_hdf5::{checkpoints_before, rename_when_whole, writing_name, MeshFile, MeshWriter};
use op2_model::{AgentValues, Model, Simulation, Snapshot, VariableValues};

use crate::{Error, Result, Scalar, ScalarType};
use op2_core::with_scalar;

/// The version of the file layout written here; a file of another version
/// is refused.
pub const CHECKPOINT_FORMAT: i32 = 1;

/// Checkpoints of a [`Simulation`] (see the module's header).
pub trait Checkpoints {
    /// Writes the simulation as it stands, between two steps, to `path`
    /// (replacing any file there, only once the new one is whole).
    ///
    /// # Errors
    /// As [`Simulation::snapshot`]; [`Error::MeshFile`] if the file cannot
    /// be written; [`Error::InvalidModel`] if the simulation is spread
    /// over ranks (use [`Checkpoints::checkpoint_across`]).
    fn checkpoint(&self, path: impl AsRef<Path>) -> Result<()>;

    /// Continues from the checkpoint at `path`: call it on a simulation of
    /// the same model (functions bound, host functions added) before it
    /// starts, in place of its initial agents (see
    /// [`Simulation::restore`]).
    ///
    /// # Errors
    /// [`Error::MeshFile`] naming the file and the object if it cannot be
    /// read, is of another layout version or model (naming the first
    /// difference), or holds values that do not fit the model; as
    /// [`Simulation::restore`].
    fn resume(&mut self, path: impl AsRef<Path>) -> Result<&mut Self>;

    /// [`Checkpoints::checkpoint`] of a run over the ranks of `mpi`: every
    /// rank writes its agents' rows. Collective: every rank calls it, and
    /// all return the same success or failure.
    ///
    /// # Errors
    /// As [`Checkpoints::checkpoint`], on any rank.
    #[cfg(feature = "mpi")]
    fn checkpoint_across(&self, path: impl AsRef<Path>, mpi: &crate::mpi::Mpi) -> Result<()>;

    /// [`Checkpoints::resume`] on the ranks of `mpi` (any number of them,
    /// whatever number wrote the file): each reads a share of the agents
    /// that move and every agent of a network's type; then distribute the
    /// simulation as a fresh one. Collective.
    ///
    /// # Errors
    /// As [`Checkpoints::resume`].
    #[cfg(feature = "mpi")]
    fn resume_across(&mut self, path: impl AsRef<Path>, mpi: &crate::mpi::Mpi) -> Result<&mut Self>;
}

impl Checkpoints for Simulation<'_> {
    fn checkpoint(&self, path: impl AsRef<Path>) -> Result<()> {
        if self.is_distributed() {
            return Err(Error::InvalidModel {
                model: self.model().name().to_string(),
                reason: "is spread over ranks: write its checkpoint with every rank (Checkpoints::checkpoint_across)"
                    .to_string(),
            });
        }
        let path = path.as_ref();
        let snapshot = self.snapshot()?;
        let writing = writing_name(path);
        let totals: Vec<usize> = snapshot.agents.iter().map(|a| a.ids.len()).collect();
        let next_ids: Vec<u64> = snapshot.agents.iter().map(|a| a.next_id).collect();
        let written = (|| {
            let w = MeshWriter::create(&writing)?;
            write_description(&w, self.model(), &snapshot, &totals, &next_ids)?;
            for t in tables(&snapshot, &vec![0; totals.len()]) {
                with_scalar!(t.scalar, T => w.write_dat_table::<T>(&t.name, t.dim, &values::<T>(t.bytes))?);
            }
            w.finish()
        })();
        rename_when_whole(written, &writing, path)
    }

    fn resume(&mut self, path: impl AsRef<Path>) -> Result<&mut Self> {
        let snapshot = read(self.model(), path.as_ref(), None)?;
        self.restore(snapshot)
    }

    #[cfg(feature = "mpi")]
    fn checkpoint_across(&self, path: impl AsRef<Path>, mpi: &crate::mpi::Mpi) -> Result<()> {
        let path = path.as_ref();
        let (rank, ranks) = (mpi.rank(), mpi.size());
        if ranks > 1 && !self.is_distributed() {
            // Every rank holds every agent: the file would hold each P times.
            return Err(Error::InvalidModel {
                model: self.model().name().to_string(),
                reason: "is not distributed (Simulation::distribute): each rank holds a whole run, so write its checkpoint with Checkpoints::checkpoint".to_string(),
            });
        }
        let snapshot = agree(mpi, path, self.snapshot(), "took its snapshot")?;
        // Every rank's count of every type, and the next ids (the largest).
        let types = snapshot.agents.len();
        let mut counts = vec![0u64; types * ranks];
        let mut next = vec![0u64; types * ranks];
        for (k, a) in snapshot.agents.iter().enumerate() {
            counts[k * ranks + rank] = a.ids.len() as u64;
            next[k * ranks + rank] = a.next_id;
        }
        mpi.sum_u64(&mut counts);
        mpi.sum_u64(&mut next);
        let of = |v: &[u64], k: usize| v[k * ranks..(k + 1) * ranks].to_vec();
        let totals: Vec<usize> = (0..types)
            .map(|k| of(&counts, k).iter().sum::<u64>() as usize)
            .collect();
        let firsts: Vec<usize> = (0..types)
            .map(|k| of(&counts, k)[..rank].iter().sum::<u64>() as usize)
            .collect();
        let next_ids: Vec<u64> = (0..types)
            .map(|k| of(&next, k).into_iter().max().unwrap_or(0))
            .collect();
        let writing = writing_name(path);
        let described = match rank {
            0 => MeshWriter::create(&writing).and_then(|w| {
                write_description(&w, self.model(), &snapshot, &totals, &next_ids).and_then(|()| w.finish())
            }),
            _ => Ok(()),
        };
        if let Err(e) = agree(mpi, path, described, "described the run") {
            if rank == 0 {
                let _ = std::fs::remove_file(&writing);
            }
            return Err(e);
        }
        let failed = |e| {
            if rank == 0 {
                let _ = std::fs::remove_file(&writing);
            }
            e
        };
        let written = MeshWriter::append_parallel(&writing, mpi).and_then(|w| {
            // Every table's making is collective: a rank that failed one
            // goes on with the others, and reports its first failure.
            let mut first = Ok(());
            for t in tables(&snapshot, &firsts) {
                let rows = t.first..t.first + t.bytes.len() / (t.dim * t.scalar.size());
                let r = with_scalar!(t.scalar, T => w.write_dat_rows::<T>(&t.name, t.dim, totals[t.agent], rows, &values::<T>(t.bytes)));
                first = first.and(r);
            }
            first.and(w.finish())
        });
        agree(mpi, path, written, "wrote its rows").map_err(failed)?;
        let renamed = match rank {
            0 => rename_when_whole(Ok(()), &writing, path),
            _ => Ok(()),
        };
        agree(mpi, path, renamed, "renamed the file")
    }

    #[cfg(feature = "mpi")]
    fn resume_across(&mut self, path: impl AsRef<Path>, mpi: &crate::mpi::Mpi) -> Result<&mut Self> {
        let path = path.as_ref();
        let snapshot = read(self.model(), path, Some((mpi.rank(), mpi.size())));
        let snapshot = agree(mpi, path, snapshot, "read the checkpoint")?;
        // A rank's share may be refused where another's is not.
        let restored = self.restore(snapshot).map(drop);
        agree(mpi, path, restored, "restored its share")?;
        Ok(self)
    }
}

/// Checkpoints every few steps into a folder, keeping the last two (what
/// `--checkpoint DIR --checkpoint-every K` asks of the examples): call
/// [`CheckpointEvery::after_step`] after each step.
pub struct CheckpointEvery<'m> {
    dir: PathBuf,
    every: u64,
    written: std::collections::VecDeque<PathBuf>,
    #[cfg(feature = "mpi")]
    mpi: Option<&'m crate::mpi::Mpi>,
    #[cfg(not(feature = "mpi"))]
    mpi: std::marker::PhantomData<&'m ()>,
}

impl<'m> CheckpointEvery<'m> {
    /// Checkpoints `dir/step_<k>.h5` at every step `k` that is a multiple
    /// of `every` (at least 1), by this process alone.
    pub fn new(dir: impl Into<PathBuf>, every: u64) -> CheckpointEvery<'m> {
        CheckpointEvery {
            dir: dir.into(),
            every: every.max(1),
            written: std::collections::VecDeque::new(),
            mpi: Default::default(),
        }
    }

    /// The same, written by every rank of `mpi`
    /// ([`Checkpoints::checkpoint_across`]; rank 0 makes the folder and
    /// removes old files).
    #[cfg(feature = "mpi")]
    pub fn across(mut self, mpi: &'m crate::mpi::Mpi) -> CheckpointEvery<'m> {
        self.mpi = Some(mpi);
        self
    }

    /// After a step of `sim`: writes its checkpoint if the step is one to
    /// write, and removes the one before the last two; returns the file
    /// written.
    ///
    /// # Errors
    /// [`Error::Io`] if the folder cannot be made (on every rank); as
    /// [`Checkpoints::checkpoint`]. An old file that cannot be removed is
    /// only reported on stderr.
    pub fn after_step(&mut self, sim: &Simulation<'_>) -> Result<Option<PathBuf>> {
        let step = sim.steps();
        if step % self.every != 0 {
            return Ok(None);
        }
        #[cfg(feature = "mpi")]
        let first = self.mpi.is_none_or(|m| m.rank() == 0);
        #[cfg(not(feature = "mpi"))]
        let first = true;
        let io = |path: &Path, e: std::io::Error| Error::Io {
            path: path.to_path_buf(),
            reason: e.to_string(),
        };
        let made = match first {
            true => std::fs::create_dir_all(&self.dir).map_err(|e| io(&self.dir, e)),
            false => Ok(()),
        };
        let path = self.dir.join(format!("step_{step}.h5"));
        #[cfg(feature = "mpi")]
        match self.mpi {
            Some(mpi) => {
                agree(mpi, &path, made, "made the folder")?;
                sim.checkpoint_across(&path, mpi)?
            }
            None => {
                made?;
                sim.checkpoint(&path)?
            }
        }
        #[cfg(not(feature = "mpi"))]
        {
            made?;
            sim.checkpoint(&path)?;
        }
        if self.written.is_empty() {
            // A resumed run's folder holds the checkpoints before it: they
            // count among the ones kept.
            self.written = checkpoints_before(&self.dir, step).into();
        }
        self.written.push_back(path.clone());
        while self.written.len() > 2 {
            let old = self.written.pop_front().expect("three written");
            // Best effort: a file that cannot go is no reason to stop a run.
            if first {
                if let Err(e) = std::fs::remove_file(&old) {
                    eprintln!("checkpoints: cannot remove {}: {e}", old.display());
                }
            }
        }
        Ok(Some(path))
    }
}

/// Everything but the tables: written by one process.
fn write_description(w: &MeshWriter, model: &Model, s: &Snapshot, totals: &[usize], next: &[u64]) -> Result<()> {
    w.write_constant::<i32>("checkpoint/format", &[CHECKPOINT_FORMAT])?;
    w.write_text("checkpoint/model", &s.model)?;
    w.write_text("checkpoint/layout", &s.layout.join("\n"))?;
    w.write_constant::<i64>("checkpoint/steps", &[s.steps as i64])?;
    for (k, a) in s.agents.iter().enumerate() {
        let g = format!("agents/{}", a.name);
        w.write_constant::<i64>(&format!("{g}/count"), &[totals[k] as i64])?;
        let counters = [a.stream_seed as i64, i64::from(a.stream_loops), next[k] as i64];
        w.write_constant::<i64>(&format!("{g}/counters"), &counters)?;
    }
    for (p, (name, bytes)) in model.properties().iter().zip(&s.environment) {
        if !bytes.is_empty() {
            let name = format!("environment/{name}");
            with_scalar!(p.scalar(), T => w.write_constant::<T>(&name, &values::<T>(bytes))?);
        }
    }
    for (name, edges) in &s.networks {
        let flat: Vec<i64> = edges.iter().flat_map(|&(a, b)| [a as i64, b as i64]).collect();
        w.write_dat_table::<i64>(&format!("networks/{name}"), 2, &flat)?;
    }
    Ok(())
}

/// One table of this process's rows.
struct Table<'a> {
    name: String,
    scalar: ScalarType,
    dim: usize,
    /// The agent type whose count (over every process) is its rows.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    agent: usize,
    /// This process's first row.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    first: usize,
    bytes: &'a [u8],
}

/// The tables of `s`, this process's rows starting at `firsts[type]`.
fn tables<'a>(s: &'a Snapshot, firsts: &[usize]) -> Vec<Table<'a>> {
    let mut out = Vec::new();
    for (k, a) in s.agents.iter().enumerate() {
        let g = format!("agents/{}", a.name);
        let table = |name: String, scalar, dim, bytes| Table {
            name,
            scalar,
            dim,
            agent: k,
            first: firsts[k],
            bytes,
        };
        // Ids are stored as i64 (HDF5's signed 64-bit; the same bits).
        out.push(table(
            format!("{g}/ids"),
            ScalarType::I64,
            1,
            bytemuck::cast_slice(&a.ids),
        ));
        for v in &a.variables {
            let name = format!("{g}/variables/{}", v.name);
            out.push(table(name, v.scalar, v.dim, &v.bytes));
        }
        if let Some(states) = &a.states {
            out.push(table(
                format!("{g}/states"),
                ScalarType::I32,
                1,
                bytemuck::cast_slice(states),
            ));
        }
    }
    out
}

fn as_bytes<T: Scalar>(values: &[T]) -> Vec<u8> {
    bytemuck::cast_slice(values).to_vec()
}

/// Bytes as values of `T`: the bytes themselves where they are aligned
/// for `T`, else a copy.
fn values<T: Scalar>(bytes: &[u8]) -> std::borrow::Cow<'_, [T]> {
    match bytemuck::try_cast_slice(bytes) {
        Ok(values) => std::borrow::Cow::Borrowed(values),
        Err(_) => (bytes.chunks_exact(std::mem::size_of::<T>()))
            .map(bytemuck::pod_read_unaligned)
            .collect(),
    }
}

/// The checkpoint at `path` for `model`: every agent's rows, or with
/// `share` `(rank, ranks)` a block of the rows of each type that is not a
/// network's.
fn read(model: &Model, path: &Path, share: Option<(usize, usize)>) -> Result<Snapshot> {
    let file = MeshFile::open(path)?;
    let bad = |object: &str, reason: String| Error::mesh_file(path, object, reason);
    match file.constant::<i32>("checkpoint/format")?[..] {
        [CHECKPOINT_FORMAT] => {}
        ref v => {
            return Err(bad(
                "checkpoint/format",
                format!("layout version {v:?}; this op2 reads version {CHECKPOINT_FORMAT}"),
            ))
        }
    }
    let name = file.text("checkpoint/model")?;
    let layout: Vec<String> = file.text("checkpoint/layout")?.lines().map(String::from).collect();
    if let Some(why) = model.layout_differs(&name, &layout) {
        return Err(bad(
            "checkpoint/layout",
            format!("not a checkpoint of this model: {why}"),
        ));
    }
    let one = |object: &str| -> Result<i64> {
        match file.constant::<i64>(object)?[..] {
            [v] if v >= 0 => Ok(v),
            ref v => Err(bad(object, format!("expected one count, found {v:?}"))),
        }
    };
    let steps = one("checkpoint/steps")? as u64;
    let mut agents = Vec::new();
    for a in model.agent_types() {
        let g = format!("agents/{}", a.name());
        let count = one(&format!("{g}/count"))? as usize;
        let rows = match share {
            // A block of rows each (any share will do: distribute places them).
            Some((rank, ranks)) if model.network_of(a.name()).is_none() => {
                let at = |r: usize| (count as u128 * r as u128 / ranks as u128) as usize;
                at(rank)..at(rank + 1)
            }
            _ => 0..count,
        };
        let counters = file.constant::<i64>(&format!("{g}/counters"))?;
        let [seed, loops, next_id] = counters[..] else {
            return Err(bad(
                &format!("{g}/counters"),
                format!("expected 3 values, found {}", counters.len()),
            ));
        };
        let table = |name: &str, scalar: ScalarType, dim: usize| -> Result<Vec<u8>> {
            let t = file.dat_table(name)?;
            if t.rows != count || t.dim != dim || t.element != scalar {
                return Err(bad(
                    name,
                    format!(
                        "a table of {} rows of {} {:?}, where {count} rows of {dim} {scalar:?} are expected",
                        t.rows, t.dim, t.element
                    ),
                ));
            }
            with_scalar!(scalar, T => Ok(as_bytes(&file.read_dat_rows::<T>(name, rows.clone())?)))
        };
        let ids: Vec<u64> = values::<i64>(&table(&format!("{g}/ids"), ScalarType::I64, 1)?)
            .iter()
            .map(|&i| i as u64)
            .collect();
        let variables = (a.variables().iter())
            .map(|v| {
                let name = format!("{g}/variables/{}", v.name());
                Ok(VariableValues {
                    name: v.name().to_string(),
                    scalar: v.scalar(),
                    dim: v.dim(),
                    bytes: table(&name, v.scalar(), v.dim())?,
                })
            })
            .collect::<Result<_>>()?;
        let states = match a.state_names().is_empty() {
            true => None,
            false => Some(values::<i32>(&table(&format!("{g}/states"), ScalarType::I32, 1)?).into_owned()),
        };
        agents.push(AgentValues {
            name: a.name().to_string(),
            ids,
            variables,
            states,
            stream_seed: seed as u64,
            stream_loops: u32::try_from(loops).map_err(|_| bad(&format!("{g}/counters"), format!("{loops} loops")))?,
            next_id: next_id as u64,
        });
    }
    let environment = (model.properties().iter())
        .map(|p| {
            let name = format!("environment/{}", p.name());
            let bytes = match p.len() {
                0 => Vec::new(),
                _ => with_scalar!(p.scalar(), T => as_bytes(&file.constant::<T>(&name)?)),
            };
            match bytes.len() == p.len() * p.scalar().size() {
                true => Ok((p.name().to_string(), bytes)),
                false => Err(bad(
                    &name,
                    format!("{} bytes where {} values are expected", bytes.len(), p.len()),
                )),
            }
        })
        .collect::<Result<_>>()?;
    let networks = (model.networks().iter())
        .map(|n| {
            let name = format!("networks/{}", n.name());
            let t = file.dat_table(&name)?;
            if t.dim != 2 || t.element != ScalarType::I64 {
                return Err(bad(&name, "a network's edges are pairs of 64-bit ids".to_string()));
            }
            let flat = file.read_dat_rows::<i64>(&name, 0..t.rows)?;
            let edges = flat.chunks_exact(2).map(|e| (e[0] as u64, e[1] as u64)).collect();
            Ok((n.name().to_string(), edges))
        })
        .collect::<Result<_>>()?;
    Ok(Snapshot {
        model: name,
        layout,
        steps,
        agents,
        environment,
        networks,
    })
}
