//! How device backends keep indirect writes race-free (docs/ARCHITECTURE.md, The planner):
//! colour the elements of each block and apply their writes one colour at a
//! time, or apply increments (and MIN/MAX) with atomic operations and need no
//! plan at all.

use std::fmt;
use std::str::FromStr;

use op2_core::{Access, Error};

use crate::codegen::{ArgKind, LoopShape};

/// The user's choice for device loops with increments through maps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Increments {
    /// Blocks coloured so that no two blocks of one colour share a target,
    /// and elements coloured inside each block; one thread per element, the
    /// writes of each element colour applied in turn. Deterministic: the same
    /// bits on every run.
    #[default]
    Colouring,
    /// Atomic adds (and atomic MIN/MAX) into the target Dat; no plan, one
    /// launch. The order of additions varies between runs, so floating-point
    /// sums may differ in the last bits. Loops that WRITE or RW through a map
    /// are coloured anyway.
    Atomics,
    /// Measured per loop: each loop runs each way it can at its first calls
    /// (coloured and atomic where it has both; in blocks of 128, 256 and
    /// 512 threads where the options give no block size), once to compile
    /// and warm up, then twice timed (the host waiting before and after
    /// each), and keeps the fastest for the rest of the run; the timing
    /// summary says what each loop chose. The choice is recorded in the
    /// code cache (`RuntimeOptions::cache_dir`, under `tuning`), and a
    /// later run on the same device, kernel, shapes and set size takes it
    /// at the first call. Not deterministic from run to run where atomics
    /// win. Host backends colour.
    Auto,
}

impl Increments {
    /// The name used by `--increments` and `OP2_INCREMENTS`.
    pub fn name(self) -> &'static str {
        match self {
            Increments::Colouring => "colouring",
            Increments::Atomics => "atomics",
            Increments::Auto => "auto",
        }
    }

    /// The choice from `OP2_INCREMENTS`, or the default when it is unset or
    /// empty; an invalid value is an error naming the variable (see
    /// [`config`](crate::config)).
    pub fn from_env() -> Result<Increments, Error> {
        Ok(crate::config::Env::process().increments()?.unwrap_or_default())
    }
}

impl fmt::Display for Increments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Increments {
    type Err = Error;

    fn from_str(s: &str) -> Result<Increments, Error> {
        match s.trim().to_ascii_lowercase().as_str() {
            "colouring" | "coloring" => Ok(Increments::Colouring),
            "atomics" | "atomic" => Ok(Increments::Atomics),
            "auto" => Ok(Increments::Auto),
            other => Err(Error::InvalidOption {
                option: "increments",
                reason: format!("`{other}` is not one of: colouring, atomics, auto"),
            }),
        }
    }
}

/// The arguments that write through a map.
fn indirect_writes(shape: &LoopShape) -> impl Iterator<Item = &crate::codegen::ArgShape> {
    shape
        .args
        .iter()
        .filter(|a| crate::codegen::is_indirect(a))
        .filter(|a| a.access != Access::Read)
}

/// What one loop's generated device code does about indirect writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndirectWrites {
    /// The loop writes nothing through a map: no plan, no colours.
    None,
    /// Coloured blocks, and inside each block the writes of one element
    /// colour at a time. `whole_body` runs the whole element (gather, kernel,
    /// scatter) under the colour guard: needed for RW through a map, where an
    /// element must see the values an earlier element of its block wrote.
    Coloured {
        /// Gather and kernel under the colour guard too.
        whole_body: bool,
    },
    /// Atomic updates, no plan.
    Atomic,
}

impl IndirectWrites {
    /// The treatment of a loop of this shape under the user's choice
    /// ([`Increments::Auto`] colours here: the device executor measures
    /// which form to take).
    pub fn of(shape: &LoopShape, choice: Increments) -> IndirectWrites {
        let (mut any, mut rw, mut not_atomic) = (false, false, false);
        for a in indirect_writes(shape) {
            any = true;
            // A ragged INC adds inside the kernel, so the kernel runs under the guard too.
            rw |= a.access == Access::Rw || a.kind == ArgKind::Ragged;
            not_atomic |= matches!(a.access, Access::Rw | Access::Write);
        }
        match (any, choice) {
            (false, _) => IndirectWrites::None,
            (true, Increments::Atomics) if !not_atomic => IndirectWrites::Atomic,
            (true, _) => IndirectWrites::Coloured { whole_body: rw },
        }
    }

    /// Whether the atomic form of a loop of this shape updates 64-bit values
    /// (which OpenCL devices support only with an extension).
    pub fn needs_64_bit_atomics(shape: &LoopShape) -> bool {
        indirect_writes(shape).any(|a| a.scalar.size() == 8)
    }

    /// Whether the loop runs over a plan's coloured blocks.
    pub fn needs_plan(self) -> bool {
        matches!(self, IndirectWrites::Coloured { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::codegen::ArgShape;
    use op2_core::ScalarType;

    fn shape(args: &[(ArgKind, Access)]) -> LoopShape {
        LoopShape {
            kernel: "k",
            source_id: 0,
            args: args
                .iter()
                .map(|&(kind, access)| ArgShape {
                    kind,
                    access,
                    scalar: ScalarType::F64,
                    dim: 1,
                    columns: false,
                    long_map: false,
                })
                .collect(),
            partial_words: 0,
            subset: false,
        }
    }

    #[test]
    fn the_treatment_follows_the_indirect_writes() {
        let entry = ArgKind::MapEntry { arity: 2, index: 0 };
        let all = ArgKind::MapAll { arity: 2 };
        let of = |args: &[(ArgKind, Access)], i| IndirectWrites::of(&shape(args), i);
        // Direct writes and indirect reads need nothing.
        let reads = [(ArgKind::Direct, Access::Write), (entry, Access::Read)];
        assert_eq!(of(&reads, Increments::Atomics), IndirectWrites::None);
        assert_eq!(of(&reads, Increments::Colouring), IndirectWrites::None);
        // Increments and MIN/MAX: as chosen.
        let incs = [(entry, Access::Inc), (all, Access::Max)];
        assert_eq!(of(&incs, Increments::Atomics), IndirectWrites::Atomic);
        assert_eq!(
            of(&incs, Increments::Colouring),
            IndirectWrites::Coloured { whole_body: false }
        );
        // WRITE through a map has no atomic form; RW also needs the whole body coloured.
        let write = [(entry, Access::Inc), (all, Access::Write)];
        assert_eq!(
            of(&write, Increments::Atomics),
            IndirectWrites::Coloured { whole_body: false }
        );
        let rw = [(entry, Access::Rw)];
        assert_eq!(
            of(&rw, Increments::Atomics),
            IndirectWrites::Coloured { whole_body: true }
        );
        assert!(!IndirectWrites::Atomic.needs_plan() && IndirectWrites::Coloured { whole_body: true }.needs_plan());
        // Only what goes through maps decides whether atomics are 64-bit.
        assert!(IndirectWrites::needs_64_bit_atomics(&shape(&incs)));
        let mut narrow = shape(&[(ArgKind::Direct, Access::Inc), (entry, Access::Inc)]);
        narrow.args[1].scalar = ScalarType::I32;
        assert!(!IndirectWrites::needs_64_bit_atomics(&narrow));
    }

    #[test]
    fn names_parse_back_and_bad_names_are_errors() {
        for i in [Increments::Colouring, Increments::Atomics] {
            assert_eq!(i.name().parse::<Increments>().unwrap(), i);
        }
        assert_eq!("Coloring".parse::<Increments>().unwrap(), Increments::Colouring);
        let e = "locks".parse::<Increments>().unwrap_err();
        assert!(e.to_string().contains("locks"), "{e}");
        let e = "locking".parse::<Increments>().unwrap_err();
        assert!(e.to_string().contains("colouring, atomics"), "{e}");
    }
}
