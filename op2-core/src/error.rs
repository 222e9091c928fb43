//! op2's errors: the `Error` enum that every fallible operation returns through `Result`,
//! from bad constructor input and loop validation to borrows, files, compilers, devices
//! and MPI. Each message names what was wrong; `ArgRef` names the loop argument where a
//! problem was found, and `FatesLeft` says where a failed apply left a loop's fates.
use std::fmt;

use crate::{plural, Access};

/// The result type of every fallible op2 operation.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Where in a parallel loop an error was found: the loop (its kernel's name), the
/// argument's position and the name of the Dat or Global given there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgRef {
    /// The loop, named after its kernel.
    pub loop_name: String,
    /// Position of the argument (0-based, as written in `par_loop!`).
    pub index: usize,
    /// Name of the Dat or Global passed there.
    pub name: String,
}

impl fmt::Display for ArgRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "loop `{}`, argument {} (`{}`)",
            self.loop_name, self.index, self.name
        )
    }
}

/// Where the fates of a loop are after its apply failed
/// ([`Error::FatesNotApplied`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FatesLeft {
    /// Still pending: another apply applies them.
    Kept,
    /// Forgotten: across processes a failed round is used up everywhere.
    Discarded,
    /// Applied (the set changed), but a later device step failed.
    Applied,
}

impl FatesLeft {
    /// What the user should do.
    fn advice(&self) -> &'static str {
        match self {
            FatesLeft::Kept => {
                "the fates are kept: remove the cause, then call `apply()` (or `apply_on(&rt)`) on the Lifecycle; \
                 do not run the loop again, or its kernel runs twice"
            }
            FatesLeft::Discarded => {
                "the fates were discarded (across processes a failed round is used up on every process), so this \
                 loop's births and deaths are lost"
            }
            FatesLeft::Applied => {
                "the births and deaths were applied and the set renumbered, but a device step after them failed: \
                 the Lifecycle's fates and ids on the device may be stale; do not apply again"
            }
        }
    }
}

/// Every error op2 reports.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A Map's table does not have `size * arity` entries.
    #[error("map `{map}`: expected {} ({} x arity {arity}), got {found}", plural(*.expected, "entry", "entries"), plural(*.from_size, "element", "elements"))]
    MapLength {
        /// The map.
        map: String,
        /// Size of the source set.
        from_size: usize,
        /// The map's arity.
        arity: usize,
        /// `from_size * arity`.
        expected: usize,
        /// The table's length.
        found: usize,
    },
    /// A Map entry points outside its target set.
    #[error("map `{map}`: entry {position} (element {element}, slot {slot}) is {value}, outside target set `{target}` of size {target_size}")]
    MapEntryOutOfRange {
        /// The map.
        map: String,
        /// Position in the flat table.
        position: usize,
        /// Source element (`position / arity`).
        element: usize,
        /// Slot within the element (`position % arity`).
        slot: usize,
        /// The bad value.
        value: i64,
        /// The target set.
        target: String,
        /// Its size.
        target_size: usize,
    },
    /// A ragged map's CSR arrays or edge list break its rules.
    #[error("ragged map `{map}`: {reason}")]
    InvalidRaggedMap {
        /// The map.
        map: String,
        /// What is wrong.
        reason: String,
    },
    /// A Map was declared with arity 0.
    #[error("map `{map}`: arity must be at least 1")]
    ZeroArity {
        /// The map.
        map: String,
    },
    /// A Dat or Global was declared with dim 0.
    #[error("`{name}`: dim must be at least 1")]
    ZeroDim {
        /// The Dat or Global.
        name: String,
    },
    /// A set is larger than map entries (32-bit) can address.
    #[error("set `{set}` has {size} elements; at most {max} are supported{hint}")]
    SetTooLarge {
        /// The set.
        set: String,
        /// Its size.
        size: usize,
        /// The limit.
        max: usize,
        /// What to do instead (empty, or starting with `: `).
        hint: &'static str,
    },
    /// A map with 64-bit entries (a [`crate::LongMap`]'s) was given to a
    /// feature that works with 32-bit entries only.
    #[error("map `{map}` has 64-bit entries, which {what} does not take: it reads 32-bit entries only")]
    LongMapUnsupported {
        /// The map.
        map: String,
        /// The feature (`distribution over MPI ranks`, ...).
        what: String,
    },
    /// A set of more than `i32::MAX` elements ([`crate::Set::new_long`]) was
    /// given to a feature that indexes its elements with 32-bit integers.
    #[error("set `{set}` has {size} elements, more than the i32::MAX that {what} can index")]
    LongSetUnsupported {
        /// The set.
        set: String,
        /// Its size.
        size: usize,
        /// The feature (`a subset`, `a ragged map`, ...).
        what: String,
    },
    /// A size computed from a constructor's arguments (entries of a Map,
    /// values or bytes of a Dat, elements of a set) does not fit in `usize`.
    #[error("{kind} `{name}`: the {quantity} ({expression}) overflows usize")]
    SizeOverflow {
        /// What was being built: `map`, `dat`, `global` or `set`.
        kind: &'static str,
        /// Its name.
        name: String,
        /// The quantity computed (`number of entries`, `size in bytes`, ...).
        quantity: &'static str,
        /// The computation, with the values given.
        expression: String,
    },
    /// A Map's arity or a Dat's or Global's dim beyond what op2 supports
    /// (generated code indexes entries and components with 32-bit integers).
    #[error("{kind} `{name}`: {quantity} {value} is larger than the supported maximum {max}")]
    ShapeTooLarge {
        /// `map`, `dat` or `global`.
        kind: &'static str,
        /// Its name.
        name: String,
        /// `arity` or `dim`.
        quantity: &'static str,
        /// The value given.
        value: usize,
        /// The limit.
        max: usize,
    },
    /// Host memory for a Dat, Global or Map could not be allocated.
    #[error("`{name}`: cannot allocate {bytes} bytes of host memory")]
    HostOutOfMemory {
        /// The Dat, Global or Map.
        name: String,
        /// The allocation's size.
        bytes: usize,
    },
    /// Initial data for a Dat does not have `set size * dim` values.
    #[error("dat `{dat}`: expected {} (set `{set}` of {} x dim {dim}), got {found}", plural(*.expected, "value", "values"), plural(*.set_size, "element", "elements"))]
    DatLength {
        /// The Dat.
        dat: String,
        /// Its set.
        set: String,
        /// The set's size.
        set_size: usize,
        /// The Dat's dim.
        dim: usize,
        /// `set_size * dim`.
        expected: usize,
        /// What was given.
        found: usize,
    },
    /// The loop passes a different number of arguments than the kernel takes.
    #[error("loop `{loop_name}`: the kernel takes {}, the loop passes {}", plural(*.expected, "parameter", "parameters"), plural(*.found, "argument", "arguments"))]
    ArgCount {
        /// The loop.
        loop_name: String,
        /// Kernel parameters.
        expected: usize,
        /// Loop arguments.
        found: usize,
    },
    /// The data's element type differs from the kernel parameter's.
    #[error("{at}: kernel parameter `{param}` has element type {expected}, the data holds {found}")]
    TypeMismatch {
        /// The argument.
        at: ArgRef,
        /// Kernel parameter name.
        param: String,
        /// Element type in the kernel signature.
        expected: &'static str,
        /// Element type of the Dat or Global.
        found: &'static str,
    },
    /// The data's dim differs from the kernel parameter's.
    #[error("{at}: kernel parameter `{param}` expects dim {expected}, the data has dim {found}")]
    DimMismatch {
        /// The argument.
        at: ArgRef,
        /// Kernel parameter name.
        param: String,
        /// Dim in the kernel signature.
        expected: usize,
        /// Dim of the Dat or Global.
        found: usize,
    },
    /// A whole-map argument's map arity differs from the kernel parameter's.
    #[error("{at}: kernel parameter `{param}` expects {}, map `{map}` has arity {found}", plural(*.expected, "map entry", "map entries"))]
    ArityMismatch {
        /// The argument.
        at: ArgRef,
        /// Kernel parameter name.
        param: String,
        /// The map.
        map: String,
        /// Arity in the kernel signature.
        expected: usize,
        /// The map's arity.
        found: usize,
    },
    /// `m[i]` with `i` not below the map's arity.
    #[error("{at}: map index {index} is out of range for map `{map}` of arity {arity}")]
    MapIndexOutOfRange {
        /// The argument.
        at: ArgRef,
        /// The map.
        map: String,
        /// The index given.
        index: usize,
        /// The map's arity.
        arity: usize,
    },
    /// The argument's form (direct, `m[i]`, whole map) does not fit the kernel
    /// parameter's shape.
    #[error("{at}: kernel parameter `{param}` {detail}")]
    FormMismatch {
        /// The argument.
        at: ArgRef,
        /// Kernel parameter name.
        param: String,
        /// What is wrong and what to write.
        detail: String,
    },
    /// A direct Dat argument lives on another set than the iteration set.
    #[error("{at}: dat lives on set `{dat_set}`, but the loop iterates over `{iter_set}`; access it through a map from `{iter_set}`")]
    DirectSetMismatch {
        /// The argument.
        at: ArgRef,
        /// The Dat's set.
        dat_set: String,
        /// The iteration set.
        iter_set: String,
    },
    /// An indirect argument's map does not start from the iteration set.
    #[error("{at}: map `{map}` starts from set `{map_from}`, but the loop iterates over `{iter_set}`")]
    MapFromWrongSet {
        /// The argument.
        at: ArgRef,
        /// The map.
        map: String,
        /// The map's source set.
        map_from: String,
        /// The iteration set.
        iter_set: String,
    },
    /// An indirect argument's map does not point into the Dat's set.
    #[error("{at}: map `{map}` points into set `{map_to}`, but the dat lives on `{dat_set}`")]
    MapIntoWrongSet {
        /// The argument.
        at: ArgRef,
        /// The map.
        map: String,
        /// The map's target set.
        map_to: String,
        /// The Dat's set.
        dat_set: String,
    },
    /// One Dat or Global given twice in a loop with different access modes.
    #[error("{at}: given with {access}, but argument {first_index} passes the same data with {first_access}; one loop must access a Dat in one mode")]
    ConflictingAccess {
        /// The later argument.
        at: ArgRef,
        /// Its access mode.
        access: Access,
        /// The earlier argument's position.
        first_index: usize,
        /// The earlier argument's access mode.
        first_access: Access,
    },
    /// One Dat given both directly and through a map in a loop that writes
    /// it: the planner colours map targets only, so the direct writes of one
    /// block could race with the indirect writes of another.
    #[error("{at}: writes `{name}` ({access}) {how}, but argument {first_index} writes it {first_how}; a loop may write a Dat directly or through maps, not both (pass the direct one through `Map::identity` so the planner sees it, or split the loop)")]
    DirectAndIndirectWrite {
        /// The later argument.
        at: ArgRef,
        /// The Dat.
        name: String,
        /// The access mode both arguments use.
        access: Access,
        /// How the later argument reaches the Dat ("directly" or "through map `m`").
        how: String,
        /// The earlier argument's position.
        first_index: usize,
        /// How the earlier argument reaches it.
        first_how: String,
    },
    /// One Dat or Global stored to (WRITE or RW) by two arguments that reach
    /// the same values for every element (both directly, or through the
    /// same map entries): the kernel would get two mutable views of one
    /// element's values, each written back over the other.
    #[error("{at}: writes `{name}` ({access}) {how}, as argument {first_index} already does, so both name the same values of every element; pass it once")]
    RepeatedWrite {
        /// The later argument.
        at: ArgRef,
        /// The Dat or Global.
        name: String,
        /// The access mode both arguments use.
        access: Access,
        /// How both reach it ("directly" or "through map `m`").
        how: String,
        /// The earlier argument's position.
        first_index: usize,
    },
    /// A translated kernel failed a check of checked mode (where native Rust
    /// would panic): the loop stopped touching memory outside its arrays, and
    /// the Dats it writes hold unspecified values.
    #[error("loop `{loop_name}`: the kernel failed a check at element {element} on {backend}: {check} (checked mode; the Dats this loop writes are left unspecified)")]
    KernelCheck {
        /// The loop (its kernel's name).
        loop_name: String,
        /// The backend that ran it.
        backend: &'static str,
        /// The lowest failing element (local index of the iteration set).
        element: usize,
        /// What failed, as Rust words it.
        check: String,
    },
    /// A Global given with an access mode Globals do not support (WRITE, RW).
    #[error("{at}: a Global can be READ, INC, MIN or MAX, not {access}")]
    GlobalAccess {
        /// The argument.
        at: ArgRef,
        /// The mode given.
        access: Access,
    },
    /// A Global given through a map.
    #[error("{at}: a Global cannot be accessed through a map")]
    GlobalThroughMap {
        /// The argument.
        at: ArgRef,
    },
    /// The access mode does not fit the kernel parameter's mutability.
    #[error("{at}: kernel parameter `{param}` is {mutability}, which does not fit {access}; {hint}")]
    AccessMismatch {
        /// The argument.
        at: ArgRef,
        /// Kernel parameter name.
        param: String,
        /// `&` or `&mut`.
        mutability: &'static str,
        /// The access mode.
        access: Access,
        /// What to write instead.
        hint: &'static str,
    },
    /// Data used by a loop is borrowed on the host (a live `data_ro`/`data_mut` guard).
    #[error("{at}: `{name}` is borrowed on the host ({how}); drop the guard before running the loop")]
    Borrowed {
        /// The argument.
        at: ArgRef,
        /// The Dat or Global.
        name: String,
        /// Which kind of borrow is in the way.
        how: &'static str,
    },
    /// A host accessor was refused because a conflicting borrow is live.
    #[error("`{name}` is already borrowed ({how})")]
    HostBorrow {
        /// The Dat or Global.
        name: String,
        /// Which kind of borrow is in the way.
        how: &'static str,
    },
    /// A file users bring (a graph, a pattern) is malformed: which file, which
    /// line (1-based; 0 when the problem is the file as a whole) and what was
    /// expected there.
    #[error("{}:{line}: {reason}", path.display())]
    InputFile {
        /// The file.
        path: std::path::PathBuf,
        /// The line, from 1; 0 for the whole file (e.g. it cannot be read).
        line: usize,
        /// What is wrong and what was expected.
        reason: String,
    },
    /// A mesh file (OP2's HDF5 layout, Gmsh) lacks an object or holds one
    /// other than expected: which file, which object (a dataset, an
    /// attribute, a section) and what was wrong.
    #[error("{}: `{object}`: {reason}", path.display())]
    MeshFile {
        /// The file.
        path: std::path::PathBuf,
        /// The dataset, attribute or section (`p_x`, `p_x/dim`, `$Nodes`).
        object: String,
        /// What is wrong and what was expected.
        reason: String,
    },
    /// The global ids given to a Set's elements are not one distinct id per element.
    #[error("set `{set}`: invalid global ids: {reason}")]
    InvalidGlobalIds {
        /// The set.
        set: String,
        /// What is wrong.
        reason: String,
    },
    /// A subset's indices are not elements of its set, or a loop cannot run
    /// over the subset (a distributed set).
    #[error("subset `{subset}`: {reason}")]
    InvalidSubset {
        /// The subset.
        subset: String,
        /// What is wrong.
        reason: String,
    },
    /// A stencil's lattice does not fit its set, or its offsets are empty or too many.
    #[error("stencil `{stencil}`: {reason}")]
    InvalidStencil {
        /// The stencil.
        stencil: String,
        /// What is wrong.
        reason: String,
    },
    /// An agent model's description is inconsistent: a name it does not
    /// declare, a variable used as another type, a message list no
    /// function outputs, or functions that cannot be ordered.
    #[error("model `{model}`: {reason}")]
    InvalidModel {
        /// The model.
        model: String,
        /// What is wrong, and where.
        reason: String,
    },
    /// A message list cannot be made or built as asked.
    #[error("message list `{list}`: {reason}")]
    InvalidMessages {
        /// The list.
        list: String,
        /// What is wrong.
        reason: String,
    },
    /// A loop reads a message list in a way it cannot: before its first
    /// build, through a Dat that is not one of its variables, or not READ.
    #[error("{at}: {reason}")]
    MessageArg {
        /// The argument.
        at: ArgRef,
        /// What is wrong.
        reason: String,
    },
    /// A dynamic set cannot change now: a loop over it (or through a map
    /// from or into it) is running.
    #[error("set `{set}` cannot change size while it is in use ({how})")]
    SetInUse {
        /// The set.
        set: String,
        /// Which kind of use is in the way.
        how: &'static str,
    },
    /// A map (or subset) refers to a dynamic set's elements by index, and
    /// the set has been renumbered (agents died or were born) since it was
    /// made: its indices point at other agents now.
    #[error(
        "{what} `{name}` was made for set `{set}` before it changed size (generation {made}, now {now}): rebuild it"
    )]
    StaleIndices {
        /// "map", "ragged map" or "subset".
        what: &'static str,
        /// Its name.
        name: String,
        /// The dynamic set.
        set: String,
        /// The set's generation when it was made.
        made: u64,
        /// The set's generation now.
        now: u64,
    },
    /// Random streams cannot give a loop a stream it has not given before:
    /// every loop counter is used.
    #[error("random streams `{streams}`: all {} loop counters are used (each loop that draws from them takes the next, and a counter given twice repeats every stream); make another `RandomStreams` with a new seed, or call `set_loops` to choose the counter yourself", u64::from(u32::MAX) + 1)]
    StreamsExhausted {
        /// The streams.
        streams: String,
    },
    /// One thing given twice in a loop where the kernel must get it once.
    #[error("{at}: {reason}")]
    RepeatedArg {
        /// Where.
        at: ArgRef,
        /// What is repeated, and what to do.
        reason: String,
    },
    /// A loop given `life(FATE)` ran, but applying the births and deaths
    /// it decided failed.
    #[error("loop `{loop_name}` ran, but applying its births and deaths to set `{set}` failed: {source}; {}", fates.advice())]
    FatesNotApplied {
        /// The loop.
        loop_name: String,
        /// The dynamic set.
        set: String,
        /// Where the fates the loop decided are now.
        fates: FatesLeft,
        /// Why the apply failed.
        source: Box<Error>,
    },
    /// A dynamic set changed under an operation that had looked at it.
    #[error("set `{set}` changed while {reason}")]
    SetChanged {
        /// The set.
        set: String,
        /// What was going on, and what to do.
        reason: String,
    },
    /// A dynamic population's births and deaths cannot be set up as asked.
    #[error("lifecycle of set `{set}`: {reason}")]
    InvalidLifecycle {
        /// The set.
        set: String,
        /// What is wrong.
        reason: String,
    },
    /// A mesh description ([`MeshDesc`](crate::MeshDesc)), a graph or a
    /// renumbering was given something that does not fit it: a set or map
    /// index out of range, a table of the wrong length, an entry outside
    /// its target set, offsets that do not describe rows.
    #[error("mesh description: {reason}")]
    InvalidMeshDesc {
        /// What is wrong, and where.
        reason: String,
    },
    /// A dynamic set cannot be permuted as asked: the order is not a
    /// permutation of its elements, or the set is not dynamic.
    #[error("cannot permute set `{set}`: {reason}")]
    InvalidPermutation {
        /// The set.
        set: String,
        /// What is wrong.
        reason: String,
    },
    /// Agents cannot move into or out of a set: it is not dynamic, its Dats
    /// cannot be told apart by name, the packed agents were made for other
    /// Dats, or the indices or ids do not fit.
    #[error("cannot move agents of set `{set}`: {reason}")]
    InvalidMigration {
        /// The set.
        set: String,
        /// What is wrong.
        reason: String,
    },
    /// Two Dats cannot swap their values: they are not on one Set with one dim.
    #[error("cannot swap `{first}` and `{second}`: {reason}")]
    SwapMismatch {
        /// The Dat whose `swap` was called.
        first: String,
        /// The Dat it was given.
        second: String,
        /// What differs.
        reason: String,
    },
    /// The C compiler rejected a generated loop. The source stays on disk.
    #[error("loop `{loop_name}`: the C compiler failed on {}:\n{log}", source_path.display())]
    JitCompile {
        /// The loop.
        loop_name: String,
        /// The generated source, kept for the user to read.
        source_path: std::path::PathBuf,
        /// The compiler's output.
        log: String,
    },
    /// The C compiler could not be run.
    #[error("the C compiler `{command}` could not be run: {reason}; set OP2_CC to a working compiler")]
    CompilerNotFound {
        /// The command tried.
        command: String,
        /// What went wrong.
        reason: String,
    },
    /// A compiled loop could not be loaded.
    #[error("loop `{loop_name}`: cannot load {}: {reason}", path.display())]
    JitLoad {
        /// The loop.
        loop_name: String,
        /// The shared object.
        path: std::path::PathBuf,
        /// What the loader said.
        reason: String,
    },
    /// A file-system operation of op2 itself (e.g. the code cache) failed.
    #[error("{}: {reason}", path.display())]
    Io {
        /// The file or directory.
        path: std::path::PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// Copying data between host and device failed.
    #[error("`{name}`: transfer between host and device failed: {reason}")]
    Transfer {
        /// The Dat or Global.
        name: String,
        /// What the device layer said.
        reason: String,
    },
    /// A device backend's runtime, platform or device is missing.
    #[error("{backend}: {reason}")]
    DeviceUnavailable {
        /// The backend.
        backend: &'static str,
        /// What is missing (the library, a platform, a matching device: with what exists).
        reason: String,
    },
    /// A device API call failed.
    #[error("{backend}: {call} failed on {device}: {reason}")]
    Device {
        /// The backend.
        backend: &'static str,
        /// The device.
        device: String,
        /// The API call or step.
        call: String,
        /// The error the API returned.
        reason: String,
    },
    /// Device memory ran out.
    #[error("{backend}: out of device memory on {device} allocating {bytes} bytes for `{name}`")]
    DeviceOutOfMemory {
        /// The backend.
        backend: &'static str,
        /// The device.
        device: String,
        /// The Dat, Global or Map.
        name: String,
        /// The allocation's size.
        bytes: usize,
    },
    /// A generated device program failed to build.
    #[error("loop `{loop_name}`: the {backend} program failed to build on {device}:\n{log}\n--- generated source ---\n{source_text}")]
    DeviceBuild {
        /// The backend.
        backend: &'static str,
        /// The loop.
        loop_name: String,
        /// The device.
        device: String,
        /// The build log.
        log: String,
        /// The generated source.
        source_text: String,
    },
    /// A distributed run could not be set up or communicate.
    #[error("mpi: {reason}")]
    Mpi {
        /// What went wrong.
        reason: String,
    },
    /// A runtime option with an unusable value.
    #[error("invalid runtime option `{option}`: {reason}")]
    InvalidOption {
        /// The option.
        option: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// An unknown backend name (e.g. `--backend` or [`str::parse`]; in
    /// `OP2_BACKEND` it is an [`Error::InvalidOption`] naming the variable).
    #[error("unknown backend `{name}`; available: {available}")]
    UnknownBackend {
        /// The name asked for.
        name: String,
        /// Backends compiled in and usable.
        available: String,
    },
    /// A known backend that cannot be used in this build or on this machine.
    #[error("backend `{name}` is not available: {reason}; available: {available}")]
    BackendUnavailable {
        /// The backend asked for.
        name: &'static str,
        /// Why (missing feature, missing device or library).
        reason: String,
        /// Backends compiled in and usable.
        available: String,
    },
}

impl Error {
    /// An [`Error::MeshFile`]: `object` of the mesh file `path` is not what
    /// was expected, for `reason`.
    pub fn mesh_file(
        path: impl Into<std::path::PathBuf>,
        object: impl Into<String>,
        reason: impl Into<String>,
    ) -> Error {
        Error::MeshFile {
            path: path.into(),
            object: object.into(),
            reason: reason.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_of_one_take_the_singular() {
        let e = Error::ArgCount {
            loop_name: "l".into(),
            expected: 1,
            found: 2,
        };
        assert_eq!(
            e.to_string(),
            "loop `l`: the kernel takes 1 parameter, the loop passes 2 arguments"
        );
        let e = Error::MapLength {
            map: "m".into(),
            from_size: 1,
            arity: 1,
            expected: 1,
            found: 0,
        };
        assert_eq!(e.to_string(), "map `m`: expected 1 entry (1 element x arity 1), got 0");
    }
}
