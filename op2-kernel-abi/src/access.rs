//! How a parallel loop accesses an argument (`READ`, `WRITE`, `RW`, `INC`,
//! `MIN`, `MAX`): the modes `par_loop!` takes, checks against kernel
//! parameters, and hands to every backend.

use std::fmt;

/// How a parallel loop accesses one of its arguments.
///
/// Staging semantics (docs/ARCHITECTURE.md, Semantics every backend shares):
/// `Read` gathers, `Write` never reads and assigns, `Rw` gathers and assigns,
/// `Inc` starts from zero and adds, `Min`/`Max` start from the current value
/// and combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// Read only.
    Read,
    /// Write every component; the old value is never read.
    Write,
    /// Read and write.
    Rw,
    /// Increment: contributions are added to the target.
    Inc,
    /// Minimum: the target becomes the minimum of itself and the contributions.
    Min,
    /// Maximum: the target becomes the maximum of itself and the contributions.
    Max,
}

impl Access {
    /// Every mode, in the order error messages list them.
    pub const ALL: [Access; 6] = [
        Access::Read,
        Access::Write,
        Access::Rw,
        Access::Inc,
        Access::Min,
        Access::Max,
    ];

    /// The mode `par_loop!` names `keyword` (`READ`, ...).
    pub fn from_keyword(keyword: &str) -> Option<Access> {
        Access::ALL.into_iter().find(|a| a.keyword() == keyword)
    }

    /// Whether the loop may change the argument.
    pub const fn writes(self) -> bool {
        !matches!(self, Access::Read)
    }

    /// Whether the old value is read (everything except `Write`).
    pub const fn reads(self) -> bool {
        !matches!(self, Access::Write)
    }

    /// Whether this mode is a reduction (`Inc`, `Min`, `Max`).
    pub const fn is_reduction(self) -> bool {
        matches!(self, Access::Inc | Access::Min | Access::Max)
    }

    /// The name used in `par_loop!` (`READ`, `WRITE`, ...).
    pub const fn keyword(self) -> &'static str {
        match self {
            Access::Read => "READ",
            Access::Write => "WRITE",
            Access::Rw => "RW",
            Access::Inc => "INC",
            Access::Min => "MIN",
            Access::Max => "MAX",
        }
    }
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.keyword())
    }
}
