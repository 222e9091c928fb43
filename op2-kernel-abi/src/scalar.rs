//! Facts about the kernel language that both `#[op2::kernel]` (which checks
//! and translates kernel bodies) and the code generators of op2-backends
//! need: its scalar types with their Rust and C spellings, and the math
//! functions a kernel may call with their C names. One table each, so that
//! what the macro accepts, what it emits and what the generated preludes
//! define cannot drift apart.

use crate::ScalarType;

/// A scalar type a translated kernel may use: the data types
/// ([`ScalarType`]) and the ones kernels may only use locally (`u64`,
/// `usize`, `isize`, `bool`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelScalar {
    /// `f64`
    F64,
    /// `f32`
    F32,
    /// `i32`
    I32,
    /// `i64`
    I64,
    /// `u32`
    U32,
    /// `u64`
    U64,
    /// `usize`
    Usize,
    /// `isize`
    Isize,
    /// `bool`
    Bool,
}

impl KernelScalar {
    /// Every kernel scalar type, data types first.
    pub const ALL: [KernelScalar; 9] = [
        KernelScalar::F64,
        KernelScalar::F32,
        KernelScalar::I32,
        KernelScalar::I64,
        KernelScalar::U32,
        KernelScalar::U64,
        KernelScalar::Usize,
        KernelScalar::Isize,
        KernelScalar::Bool,
    ];

    /// The kernel type of a data type.
    pub const fn of(t: ScalarType) -> KernelScalar {
        match t {
            ScalarType::F64 => KernelScalar::F64,
            ScalarType::F32 => KernelScalar::F32,
            ScalarType::I32 => KernelScalar::I32,
            ScalarType::I64 => KernelScalar::I64,
            ScalarType::U32 => KernelScalar::U32,
        }
    }

    /// The data type this is, if Dats and Globals may hold it.
    pub fn data_type(self) -> Option<ScalarType> {
        ScalarType::ALL.into_iter().find(|&t| KernelScalar::of(t) == self)
    }

    /// The Rust name (`f64`, ...).
    pub const fn rust_name(self) -> &'static str {
        match self {
            KernelScalar::F64 => "f64",
            KernelScalar::F32 => "f32",
            KernelScalar::I32 => "i32",
            KernelScalar::I64 => "i64",
            KernelScalar::U32 => "u32",
            KernelScalar::U64 => "u64",
            KernelScalar::Usize => "usize",
            KernelScalar::Isize => "isize",
            KernelScalar::Bool => "bool",
        }
    }

    /// The type a Rust type name names.
    pub fn from_rust_name(name: &str) -> Option<KernelScalar> {
        KernelScalar::ALL.into_iter().find(|t| t.rust_name() == name)
    }

    /// The C spelling. LP64: `long` is 64-bit in C on Linux, in CUDA and in
    /// OpenCL, so it serves `i64` and `isize` everywhere; `bool` is an `int`.
    pub const fn c_name(self) -> &'static str {
        match self {
            KernelScalar::F64 => "double",
            KernelScalar::F32 => "float",
            KernelScalar::I32 | KernelScalar::Bool => "int",
            KernelScalar::I64 | KernelScalar::Isize => "long",
            KernelScalar::U32 => "unsigned int",
            KernelScalar::U64 | KernelScalar::Usize => "unsigned long",
        }
    }

    /// The suffix of the generated prelude's helpers (`op2_min_i32`): types
    /// of one C type share one helper.
    pub const fn helper_suffix(self) -> &'static str {
        match self {
            KernelScalar::I32 | KernelScalar::Bool => "i32",
            KernelScalar::I64 | KernelScalar::Isize => "i64",
            KernelScalar::U64 | KernelScalar::Usize => "u64",
            t => t.rust_name(),
        }
    }

    /// `f64` or `f32`.
    pub const fn is_float(self) -> bool {
        matches!(self, KernelScalar::F64 | KernelScalar::F32)
    }

    /// An integer type (`bool` is not one).
    pub const fn is_int(self) -> bool {
        !self.is_float() && !matches!(self, KernelScalar::Bool)
    }
}

/// A math function a kernel may call, as a method (`x.sqrt()`) or through
/// its type (`f64::sqrt(x)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MathFunction {
    /// The Rust name.
    pub name: &'static str,
    /// The number of arguments, the receiver included.
    pub arity: usize,
    /// The C99 function for `double` arguments; see [`c_float_name`] for
    /// `float` ones.
    pub c_name: &'static str,
    /// Whether integers have it too, as the prelude's `op2_<name>_<type>`
    /// helpers (C's `abs` family would truncate to `int`).
    pub on_integers: bool,
    /// Whether the last argument is an `i32` exponent (`powi`), which C's
    /// `pow` takes converted to the float type.
    pub int_exponent: bool,
}

const fn math(name: &'static str, arity: usize, c_name: &'static str) -> MathFunction {
    MathFunction {
        name,
        arity,
        c_name,
        on_integers: false,
        int_exponent: false,
    }
}

const fn on_integers(f: MathFunction) -> MathFunction {
    MathFunction { on_integers: true, ..f }
}

/// The math functions kernels may call, in the order error messages list
/// them.
pub const MATH_FUNCTIONS: [MathFunction; 18] = [
    math("sqrt", 1, "sqrt"),
    on_integers(math("abs", 1, "fabs")),
    MathFunction {
        int_exponent: true,
        ..math("powi", 2, "pow")
    },
    math("powf", 2, "pow"),
    math("exp", 1, "exp"),
    math("ln", 1, "log"),
    math("log10", 1, "log10"),
    math("sin", 1, "sin"),
    math("cos", 1, "cos"),
    math("tan", 1, "tan"),
    math("atan2", 2, "atan2"),
    math("floor", 1, "floor"),
    math("ceil", 1, "ceil"),
    on_integers(math("min", 2, "fmin")),
    on_integers(math("max", 2, "fmax")),
    math("mul_add", 3, "fma"),
    math("hypot", 2, "hypot"),
    math("tanh", 1, "tanh"),
];

impl MathFunction {
    /// The function of this Rust name.
    pub fn named(name: &str) -> Option<&'static MathFunction> {
        MATH_FUNCTIONS.iter().find(|f| f.name == name)
    }

    /// The C function for arguments of float type `t` (`sqrt`, `sqrtf`).
    pub fn c_function(&self, t: KernelScalar) -> String {
        if t == KernelScalar::F32 {
            c_float_name(self.c_name)
        } else {
            self.c_name.to_string()
        }
    }
}

/// The Rust names of the math functions, as error messages list them.
pub fn math_function_names() -> String {
    MATH_FUNCTIONS.map(|f| f.name).join(", ")
}

/// The C99 name of a math function for `float` arguments: the `double`
/// one's with an `f` (`sqrtf`).
pub fn c_float_name(c_double: &str) -> String {
    format!("{c_double}f")
}

/// The C functions (`double` spellings) translated kernels may call for
/// math, each once, in table order.
pub fn c_math_functions() -> impl Iterator<Item = &'static str> {
    MATH_FUNCTIONS
        .iter()
        .enumerate()
        .filter(|&(k, f)| !MATH_FUNCTIONS[..k].iter().any(|g| g.c_name == f.c_name))
        .map(|(_, f)| f.c_name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_types_round_trip() {
        for t in ScalarType::ALL {
            assert_eq!(KernelScalar::of(t).data_type(), Some(t));
            assert_eq!(KernelScalar::from_rust_name(t.rust_name()), Some(KernelScalar::of(t)));
        }
        assert_eq!(KernelScalar::Usize.data_type(), None);
    }

    #[test]
    fn c_math_functions_are_listed_once() {
        let names: Vec<&str> = c_math_functions().collect();
        assert_eq!(names.len(), MATH_FUNCTIONS.len() - 1, "powi and powf share pow");
        assert_eq!(names[..3], ["sqrt", "fabs", "pow"]);
    }

    #[test]
    fn float_math_takes_the_f_suffix() {
        let f = MathFunction::named("ln").unwrap();
        assert_eq!(f.c_function(KernelScalar::F64), "log");
        assert_eq!(f.c_function(KernelScalar::F32), "logf");
        assert!(MathFunction::named("frobnicate").is_none());
    }
}

/// The random stream type kernels may create (`Philox::new(seed, id, call)`,
/// see [`Philox`](crate::Philox)), by its Rust name, and its C type and
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
    /// The Rust method of [`Philox`](crate::Philox).
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
