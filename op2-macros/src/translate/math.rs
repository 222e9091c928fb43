//! Math: calls of the kernel language's math functions (the table in
//! `op2_kernel_abi`) and the named float constants
//! (`f64::consts::PI`, `f32::EPSILON`, ...).

use op2_kernel_abi::{c_interface, MathFunction, Portability, MATH_FUNCTIONS};
use proc_macro2::Span;
use syn::Expr;

use super::types::Ty;
use super::Translator;

/// Constants of `f64::consts` / `f32::consts` and a few associated constants.
/// `MIN` and `MAX` of integer type `t` in C (`i32::MIN` as a difference:
/// its digits alone would not be an `int`).
fn int_limit(t: Ty, name: &str) -> Option<String> {
    let (min, max) = match t.concrete() {
        Ty::I32 => ("(-2147483647 - 1)", "2147483647"),
        Ty::I64 | Ty::ISIZE => ("(-9223372036854775807L - 1)", "9223372036854775807L"),
        Ty::U32 => ("0u", "4294967295u"),
        Ty::U64 | Ty::USIZE => ("0ul", "18446744073709551615ul"),
        _ => return None,
    };
    match name {
        "MIN" => Some(min.to_string()),
        "MAX" => Some(max.to_string()),
        _ => None,
    }
}

pub(super) fn named_constant(segs: &[String]) -> Option<(Ty, String)> {
    let (ty, name) = match segs {
        [std, t, consts, name] if std == "std" || std == "core" => {
            if consts != "consts" {
                return None;
            }
            (t, name)
        }
        [t, consts, name] if consts == "consts" => (t, name),
        [t, name] => (t, name),
        _ => return None,
    };
    if let Some(t) = Ty::from_rust(ty).filter(|t| t.is_int() && *t != Ty::BOOL) {
        return int_limit(t, name).map(|text| (t, text));
    }
    let ty = match ty.as_str() {
        "f64" => Ty::F64,
        "f32" => Ty::F32,
        _ => return None,
    };
    let v = match name.as_str() {
        "PI" => std::f64::consts::PI,
        "E" => std::f64::consts::E,
        "TAU" => std::f64::consts::TAU,
        "FRAC_PI_2" => std::f64::consts::FRAC_PI_2,
        "FRAC_PI_4" => std::f64::consts::FRAC_PI_4,
        "SQRT_2" => std::f64::consts::SQRT_2,
        "LN_2" => std::f64::consts::LN_2,
        "LN_10" => std::f64::consts::LN_10,
        "INFINITY" => return Some((ty, format!("(({})INFINITY)", ty.c_name()))),
        "NEG_INFINITY" => return Some((ty, format!("(-(({})INFINITY))", ty.c_name()))),
        "MAX" if ty == Ty::F64 => return Some((ty, "0x1.fffffffffffffp+1023".into())),
        "MAX" => return Some((ty, "0x1.fffffep+127f".into())),
        "MIN" if ty == Ty::F64 => return Some((ty, "(-0x1.fffffffffffffp+1023)".into())),
        "MIN" => return Some((ty, "(-0x1.fffffep+127f)".into())),
        "EPSILON" if ty == Ty::F64 => return Some((ty, "0x1p-52".into())),
        "EPSILON" => return Some((ty, "0x1p-23f".into())),
        _ => return None,
    };
    let text = if ty == Ty::F32 {
        format!("{:e}f", v as f32)
    } else {
        format!("{v:e}")
    };
    Some((ty, text))
}

impl Translator {
    /// `recv.name(args)` or `T::name(recv, args)`.
    pub(super) fn math(&mut self, name: &str, recv: &Expr, args: &[&Expr], span: Span, fty: Option<Ty>) -> String {
        let t = fty.unwrap_or_else(|| self.ty(recv).scalar()).concrete();
        let x = self.expr(recv, Some(t));
        let function = MathFunction::named(name);
        // `powi`'s exponent is an integer; every other argument has the receiver's type.
        let arg_ty = if function.is_some_and(|f| f.int_exponent) {
            Ty::I32
        } else {
            t
        };
        let mut a: Vec<String> = args.iter().map(|e| self.expr(e, Some(arg_ty))).collect();
        let Some(function) = function else {
            self.err(span, format!("`{name}` is not a supported math function"));
            return String::new();
        };
        if a.len() + 1 != function.arity {
            self.err(span, format!("wrong number of arguments for `{name}`"));
            return String::new();
        }
        if t.is_int() || t == Ty::BOOL {
            if !function.on_integers {
                self.err(span, format!("`{name}` needs a float; cast with `as f64` first"));
                return String::new();
            }
            let all: Vec<String> = std::iter::once(x).chain(a).collect();
            return format!("op2_{name}_{}({})", t.helper_suffix(), all.join(", "));
        }
        if self.uses.portable_math {
            match function.portability() {
                Portability::Exact => {}
                Portability::Twin => {
                    // op2's own function; `powi`'s exponent stays an `int`.
                    let all: Vec<String> = std::iter::once(x).chain(a).collect();
                    let c = c_interface::portable_math_function(name, t == Ty::F32);
                    return format!("{c}({})", all.join(", "));
                }
                Portability::Unavailable => {
                    self.err(
                        span,
                        format!(
                            "`{name}` has no portable version yet: a `portable_math` kernel may call {}, \
                             and the functions IEEE arithmetic defines exactly",
                            portable_names()
                        ),
                    );
                    return String::new();
                }
            }
        }
        if function.int_exponent {
            if let Some(e) = a.last_mut() {
                *e = format!("(({}){e})", t.c_name());
            }
        }
        let all: Vec<String> = std::iter::once(x).chain(a).collect();
        format!("{}({})", function.c_function(t.kernel_scalar()), all.join(", "))
    }
}

/// The functions op2 has its own versions of, as error messages list them.
fn portable_names() -> String {
    MATH_FUNCTIONS
        .iter()
        .filter(|f| f.portability() == Portability::Twin)
        .map(|f| f.name)
        .collect::<Vec<_>>()
        .join(", ")
}
