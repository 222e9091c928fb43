//! The random streams a kernel may draw from: the `Philox` type's Rust
//! name, its C type and constructor, and every draw with its C function.
//! The Rust original is `op2_core::Philox` (`op2-core/src/philox.rs`); its C
//! twin is the prelude `PHILOX_C` of op2-backends (`codegen/philox_c.rs`),
//! which repeats it operation for operation.

use crate::KernelScalar;

/// The random stream type kernels may create (`Philox::new(seed, id, call)`,
/// see `op2_core::Philox`), by its Rust name, and its C type and
/// constructor in the generated prelude.
pub const RANDOM_STREAM: RandomStream = RandomStream {
    rust_name: "Philox",
    c_type: "op2_philox",
    c_new: "op2_philox_new",
    new_args: [KernelScalar::U64, KernelScalar::U64, KernelScalar::U32],
};

/// The facts of [`RANDOM_STREAM`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RandomStream {
    /// The Rust type.
    pub rust_name: &'static str,
    /// The C struct in the prelude.
    pub c_type: &'static str,
    /// The C constructor.
    pub c_new: &'static str,
    /// The types of `new`'s arguments: seed, global id, call.
    pub new_args: [KernelScalar; 3],
}

/// A draw from a random stream, as a kernel calls it (`rng.uniform_f64()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RandomDraw {
    /// The Rust method of `op2_core::Philox`.
    pub name: &'static str,
    /// The type it returns.
    pub returns: KernelScalar,
    /// The type of its argument, if it takes one.
    pub argument: Option<KernelScalar>,
}

/// Every draw kernels may make; the C function is `op2_philox_<name>`
/// (`next_` dropped: `op2_philox_u32`).
pub const RANDOM_DRAWS: &[RandomDraw] = &[
    draw("next_u32", KernelScalar::U32, None),
    draw("next_u64", KernelScalar::U64, None),
    draw("uniform_f64", KernelScalar::F64, None),
    draw("uniform_f32", KernelScalar::F32, None),
    draw("below", KernelScalar::U32, Some(KernelScalar::U32)),
    draw("bernoulli", KernelScalar::Bool, Some(KernelScalar::F64)),
    draw("normal_f64", KernelScalar::F64, None),
    draw("normal_f32", KernelScalar::F32, None),
];

const fn draw(name: &'static str, returns: KernelScalar, argument: Option<KernelScalar>) -> RandomDraw {
    RandomDraw {
        name,
        returns,
        argument,
    }
}

impl RandomDraw {
    /// The draw of this name.
    pub fn named(name: &str) -> Option<RandomDraw> {
        RANDOM_DRAWS.iter().copied().find(|d| d.name == name)
    }

    /// The prelude's C function.
    pub fn c_function(&self) -> String {
        format!("op2_philox_{}", self.name.trim_start_matches("next_"))
    }
}
