//! The `Backend` enum: the backends op2 knows (`seq`, `rayon`, `jit`, `opencl`, `cuda`),
//! their names for `OP2_BACKEND` and `--backend`, and which ones this build can run. The
//! `Runtime` uses it to pick an executor; names are parsed here and read from the
//! environment through `config`.
use std::fmt;
use std::str::FromStr;

use op2_core::{Error, Result};

/// The backends op2 knows. Which of them can run depends on the Cargo features
/// compiled in and on the machine: see [`Backend::available`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// One thread, natural order: the reference.
    Seq,
    /// Native kernels on a team of host threads.
    Rayon,
    /// Generated C compiled with the system compiler, OpenMP threads.
    Jit,
    /// OpenCL devices.
    OpenCl,
    /// CUDA GPUs.
    Cuda,
}

impl Backend {
    /// Every backend op2 knows, in order of preference for a default.
    pub const ALL: [Backend; 5] = [
        Backend::Cuda,
        Backend::OpenCl,
        Backend::Jit,
        Backend::Rayon,
        Backend::Seq,
    ];

    /// The name used by `OP2_BACKEND` and `--backend`.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Seq => "seq",
            Backend::Rayon => "rayon",
            Backend::Jit => "jit",
            Backend::OpenCl => "opencl",
            Backend::Cuda => "cuda",
        }
    }

    /// The backends this build can run, in name order of [`Backend::ALL`]
    /// reversed (`seq` first).
    pub fn available() -> Vec<Backend> {
        Backend::ALL
            .iter()
            .rev()
            .copied()
            .filter(|b| b.unavailable_reason().is_none())
            .collect()
    }

    /// The backend used when none is asked for.
    pub fn default_choice() -> Backend {
        [Backend::Rayon, Backend::Seq]
            .into_iter()
            .find(|b| b.unavailable_reason().is_none())
            .unwrap_or(Backend::Seq)
    }

    /// Why this backend cannot run in this build, if it cannot.
    pub fn unavailable_reason(self) -> Option<String> {
        let feature = match self {
            Backend::Seq => return None,
            Backend::Rayon => ("rayon", cfg!(feature = "rayon")),
            Backend::Jit => ("jit", cfg!(feature = "jit")),
            Backend::OpenCl => ("opencl", cfg!(feature = "opencl")),
            Backend::Cuda => ("cuda", cfg!(feature = "cuda")),
        };
        if !feature.1 {
            return Some(format!("op2 was built without the `{}` feature", feature.0));
        }
        if matches!(self, Backend::Rayon | Backend::Jit | Backend::OpenCl | Backend::Cuda) {
            return None;
        }
        // Feature declared, implementation still to come (issues 3-7).
        Some(format!(
            "the `{}` backend is not implemented in this version of op2",
            feature.0
        ))
    }

    /// The backend named by `OP2_BACKEND`, or [`Backend::default_choice`] when
    /// it is unset or empty; a name op2 does not know is an error naming the
    /// variable (see [`config`](crate::config)).
    pub fn from_env() -> Result<Backend> {
        Ok(crate::config::Env::process()
            .backend()?
            .unwrap_or_else(Backend::default_choice))
    }

    /// A comma-separated list of the available backends, for messages.
    pub fn available_list() -> String {
        Backend::available()
            .iter()
            .map(|b| b.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Backend {
    type Err = Error;

    fn from_str(s: &str) -> Result<Backend> {
        let wanted = s.trim().to_ascii_lowercase();
        Backend::ALL
            .into_iter()
            .find(|b| b.name() == wanted)
            .ok_or_else(|| Error::UnknownBackend {
                name: s.to_string(),
                available: Backend::available_list(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for b in Backend::ALL {
            assert_eq!(b.name().parse::<Backend>().unwrap(), b);
        }
        assert_eq!(" SEQ ".parse::<Backend>().unwrap(), Backend::Seq);
    }

    #[test]
    fn unknown_name_lists_what_is_available() {
        let e = "fortran".parse::<Backend>().unwrap_err();
        assert!(matches!(e, Error::UnknownBackend { .. }));
        let msg = e.to_string();
        assert!(msg.contains("fortran") && msg.contains("seq"), "{msg}");
    }

    #[test]
    fn seq_is_always_available() {
        assert!(Backend::available().contains(&Backend::Seq));
        assert!(Backend::Seq.unavailable_reason().is_none());
    }
}
