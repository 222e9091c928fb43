//! Math: calls of the kernel language's math functions and the named float
//! constants (`f64::consts::PI`, `f32::EPSILON`, ...).

use proc_macro2::Span;
use syn::Expr;

use super::types::Ty;
use super::Translator;

/// Constants of `f64::consts` / `f32::consts` and a few associated constants.
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
        // `powi`'s exponent is an integer; every other argument has the receiver's type.
        let arg_ty = if name == "powi" { Ty::I32 } else { t };
        let a: Vec<String> = args.iter().map(|e| self.expr(e, Some(arg_ty))).collect();
        let arity_ok = match name {
            "powi" | "powf" | "atan2" | "min" | "max" | "hypot" => a.len() == 1,
            "mul_add" => a.len() == 2,
            _ => a.is_empty(),
        };
        if !arity_ok {
            self.err(span, format!("wrong number of arguments for `{name}`"));
            return String::new();
        }
        if t.is_int() || t == Ty::Bool {
            let helper = match name {
                "abs" | "min" | "max" => name,
                _ => {
                    self.err(span, format!("`{name}` needs a float; cast with `as f64` first"));
                    return String::new();
                }
            };
            let all: Vec<String> = std::iter::once(x).chain(a).collect();
            return format!("op2_{helper}_{}({})", t.helper_suffix(), all.join(", "));
        }
        let f = if t == Ty::F32 { "f" } else { "" };
        let cname = match name {
            "sqrt" | "exp" | "log10" | "sin" | "cos" | "tan" | "floor" | "ceil" | "tanh" | "atan2" | "hypot" => {
                name.to_string()
            }
            "abs" => "fabs".into(),
            "ln" => "log".into(),
            "min" => "fmin".into(),
            "max" => "fmax".into(),
            "mul_add" => "fma".into(),
            "powf" => "pow".into(),
            "powi" => return format!("pow{f}({x}, (({}){}))", t.c_name(), a[0]),
            other => {
                self.err(span, format!("`{other}` is not a supported math function"));
                return String::new();
            }
        };
        let all: Vec<String> = std::iter::once(x).chain(a).collect();
        format!("{cname}{f}({})", all.join(", "))
    }
}
