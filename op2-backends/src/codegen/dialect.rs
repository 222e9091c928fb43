//! The device dialects, OpenCL C and CUDA C++ for NVRTC: one table of
//! spellings per language (`Dialect`; the tables live in `opencl_c.rs` and
//! `cuda_c.rs`), which every device program reads: the loop programs
//! (`device_c.rs`) and the utility programs around them (`utility_c.rs`,
//! `binning_c.rs`, `reorder_c.rs`).

use std::fmt::Write as _;

use op2_core::{Access, ScalarType};

/// The device language a source is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceLanguage {
    /// OpenCL C 1.2.
    OpenCl,
    /// CUDA C++ for NVRTC.
    Cuda,
}

impl DeviceLanguage {
    /// The language's spellings.
    pub(super) fn dialect(self) -> &'static Dialect {
        match self {
            DeviceLanguage::OpenCl => &super::opencl_c::OPENCL,
            DeviceLanguage::Cuda => &super::cuda_c::CUDA,
        }
    }
}

/// The spellings of one device language; each dialect's file
/// (`opencl_c.rs`, `cuda_c.rs`) holds its table.
pub(super) struct Dialect {
    /// Name in the header comment.
    pub(super) name: &'static str,
    /// What every program must start with (OpenCL's `cl_khr_fp64` pragma).
    pub(super) pragmas: &'static str,
    /// The qualifiers of a helper function: `OP2_FN`.
    pub(super) function: &'static str,
    /// Writes a loop program's definitions before the common prelude
    /// (`OP2_FN` among them, from `function`).
    pub(super) prelude: fn(&mut String),
    /// Qualifier of the translated kernel function.
    pub(super) kernel_qualifier: &'static str,
    /// The entry point's qualifiers and return type.
    pub(super) entry: &'static str,
    /// Address-space qualifier of global pointers (with a trailing space).
    pub(super) global: &'static str,
    /// Address-space qualifier of the reduction scratch.
    pub(super) local: &'static str,
    /// Qualifier of an array shared by a block's threads.
    pub(super) shared: &'static str,
    /// The reduction scratch as a parameter (OpenCL) ...
    pub(super) scratch_param: Option<&'static str>,
    /// ... or as a declaration in the body (CUDA).
    pub(super) scratch_decl: Option<&'static str>,
    /// The thread block's (work-group's) index, as a `long`.
    pub(super) group_id: &'static str,
    /// The thread's index in its block, as a `long`.
    pub(super) thread_id: &'static str,
    /// The thread's index in the whole launch, as a `long`.
    pub(super) global_id: &'static str,
    /// Adds 1 to the `uint` at `p` atomically.
    pub(super) atomic_inc: &'static str,
    /// Type names utility programs use that the language lacks.
    pub(super) types: &'static str,
    /// A barrier of the block's threads (the statement).
    pub(super) barrier: &'static str,
    /// The 32-bit unsigned type.
    pub(super) uint: &'static str,
    /// The 64-bit unsigned type.
    pub(super) ulong: &'static str,
    /// The no-alias qualifier: READ data and maps are `const T *restrict`,
    /// which lets GPUs load them through the read-only data cache.
    pub(super) restrict: &'static str,
    /// What a source using 64-bit atomics must declare first.
    pub(super) int64_atomics: &'static str,
    /// The `op2_atomic_<op>_<type>` helper the scatters of an atomic loop call.
    pub(super) atomic_helper: fn(Access, ScalarType) -> String,
    /// Checked mode: what a thread whose kernel failed a check runs (keeps
    /// the lowest failing element and the union of failure codes).
    pub(super) report_failure: &'static str,
}

impl Dialect {
    /// The words a utility program is written in (`OP2_FN`, `OP2_GLOBAL`,
    /// `OP2_ENTRY`, `OP2_SHARED`, `OP2_SYNC`, `OP2_GID`, `OP2_LID`,
    /// `OP2_BLOCK`, `OP2_INC`), as `#define`s in this dialect.
    pub(super) fn utility_words(&self) -> String {
        // The indices as `long`s, cast once.
        let long = |x: &str| format!("((long){})", x.trim_start_matches("(long)"));
        let mut s = String::from(self.pragmas);
        let words = [
            ("OP2_FN", self.function.to_string()),
            ("OP2_GLOBAL", self.global.trim_end().to_string()),
            ("OP2_ENTRY", self.entry.to_string()),
            ("OP2_SHARED", self.shared.to_string()),
            ("OP2_SYNC", self.barrier.trim_end_matches(';').to_string()),
            ("OP2_GID", long(self.global_id)),
            ("OP2_LID", long(self.thread_id)),
            ("OP2_BLOCK", long(self.group_id)),
            ("OP2_INC(p)", self.atomic_inc.to_string()),
        ];
        for (word, spelling) in words {
            let _ = writeln!(s, "{}", format!("#define {word} {spelling}").trim_end());
        }
        s.push_str(self.types);
        s
    }
}
