//! The names by which a translated kernel and the code generated around it
//! meet. `#[op2::kernel]` writes kernels that use these names; the code
//! generators of op2-backends define them (per backend and per loop).
//! Spelling each once here keeps the two sides from drifting apart.

/// `OP2_IX(i, n)`: every index into a parameter goes through it. Checked
/// mode defines it as a bounds check that records a failure in
/// [`STATUS`]; otherwise it is `(i)`.
pub const INDEX: &str = "OP2_IX";

/// `OP2_IX_LOCAL(i, n)`: [`INDEX`] for the kernel's local arrays, which
/// vectorised wrappers leave unstrided.
pub const LOCAL_INDEX: &str = "OP2_IX_LOCAL";

/// `OP2_GLOBAL`: the address space of a pointer into a Dat (`__global` in
/// OpenCL, empty elsewhere).
pub const GLOBAL: &str = "OP2_GLOBAL";

/// `OP2_FN`: the qualifiers of a helper function (`static inline` in C,
/// `static __device__ inline` in CUDA, `inline` in OpenCL).
pub const FUNCTION: &str = "OP2_FN";

/// `op2_status`: the kernel's first parameter, `long *`, where checked mode
/// records the first failure (code, index, length).
pub const STATUS: &str = "op2_status";

/// The C function a kernel becomes: `op2_kernel_<kernel>`.
pub fn kernel_function(kernel: &str) -> String {
    format!("op2_kernel_{kernel}")
}

/// The macro holding parameter `param`'s dim when the kernel names it by a
/// constant: `OP2_DIM_<param>`.
pub fn dim_macro(param: &str) -> String {
    format!("OP2_DIM_{param}")
}

/// The macro holding parameter `param`'s arity when the kernel names it by
/// a constant: `OP2_ARITY_<param>`.
pub fn arity_macro(param: &str) -> String {
    format!("OP2_ARITY_{param}")
}

/// The macro `OP2_TGT_<param>(targets, j)` of slice parameter `param`: the
/// index of its `j`th element, `targets[j]` through a ragged map and `j` for
/// a Dat read whole.
pub fn targets_macro(param: &str) -> String {
    format!("OP2_TGT_{param}")
}

/// The function that adds `v` to a target of a ragged INC parameter,
/// `op2_ragged_inc_<suffix>(p, v)`, where `suffix` is the element type's
/// helper suffix (`KernelScalar::helper_suffix`): a plain `+=` where
/// elements never share targets, an atomic add where they may.
pub fn ragged_inc(suffix: &str) -> String {
    format!("op2_ragged_inc_{suffix}")
}

/// The constructor of a spatial query in the bins' search, which a kernel
/// reading a spatial message list calls.
pub const SPATIAL_NEW: &str = "op2_spatial_new";

/// The C function that a `portable_math` kernel's call of `name` (a Rust
/// math method: `sin`, `powf`, ...) becomes: `op2_pm_<name>` for `double`,
/// `op2_pm_<name>_f32` for `float` (see `PORTABLE_MATH_C`).
pub fn portable_math_function(name: &str, single: bool) -> String {
    if single {
        format!("op2_pm_{name}_f32")
    } else {
        format!("op2_pm_{name}")
    }
}
