//! The math functions a kernel may call (`x.sqrt()`, `f64::atan2(y, x)`),
//! with their arities and C names: one table that the macro checks calls
//! against, translates through, and lists in its error messages, and that
//! the generated preludes' integer helpers follow.

use crate::KernelScalar;

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

/// How a math function keeps the bits of a kernel marked
/// `#[op2::kernel(portable_math)]` the same on every backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Portability {
    /// IEEE arithmetic defines its result exactly (`sqrt`, `floor`, `min`,
    /// ...): every backend's is the same.
    Exact,
    /// op2 has its own version, in Rust and in C
    /// ([`PORTABLE_MATH_C`](crate::PORTABLE_MATH_C)).
    Twin,
    /// Neither yet: a `portable_math` kernel may not call it.
    Unavailable,
}

impl MathFunction {
    /// How this function keeps a `portable_math` kernel portable.
    pub fn portability(&self) -> Portability {
        match self.name {
            "sin" | "cos" | "tan" | "exp" | "ln" | "log10" | "powf" | "powi" => Portability::Twin,
            "atan2" | "hypot" | "tanh" => Portability::Unavailable,
            _ => Portability::Exact,
        }
    }

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
    fn c_math_functions_are_listed_once() {
        let names: Vec<&str> = c_math_functions().collect();
        assert_eq!(names.len(), MATH_FUNCTIONS.len() - 1, "powi and powf share pow");
        assert_eq!(names[..3], ["sqrt", "fabs", "pow"]);
    }

    #[test]
    fn every_function_has_a_portability() {
        let twins: Vec<&str> = MATH_FUNCTIONS
            .iter()
            .filter(|f| f.portability() == Portability::Twin)
            .map(|f| f.name)
            .collect();
        assert_eq!(twins, ["powi", "powf", "exp", "ln", "log10", "sin", "cos", "tan"]);
        assert_eq!(MathFunction::named("sqrt").unwrap().portability(), Portability::Exact);
        assert_eq!(
            MathFunction::named("tanh").unwrap().portability(),
            Portability::Unavailable
        );
    }

    #[test]
    fn float_math_takes_the_f_suffix() {
        let f = MathFunction::named("ln").unwrap();
        assert_eq!(f.c_function(KernelScalar::F64), "log");
        assert_eq!(f.c_function(KernelScalar::F32), "logf");
        assert!(MathFunction::named("frobnicate").is_none());
    }
}
