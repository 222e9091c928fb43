//! The per-element part of every generated wrapper: gather each argument
//! into a staging array, call the kernel, scatter back by access mode
//! (docs/ARCHITECTURE.md, Semantics every backend shares). The surrounding
//! code declares, for argument `k`, `arg{k}` (its data), `map{k}` (its map,
//! or a ragged map's offsets), `tgt{k}` (a ragged map's targets) and
//! `red{k}` (its reduction slot), and the element index `e`.
//!
//! A ragged argument is not staged: the kernel gets the Dat, the element's
//! targets and their count, and reads (or, for INC, adds to) the targets
//! itself through `op2_ragged_inc_<type>`, which [`ragged_inc_helpers`]
//! defines as a plain or an atomic add.

use std::fmt::Write as _;

use op2_core::Access;
use op2_kernel_abi::c_interface::{self, FUNCTION, GLOBAL};

use super::{c_type, helper_suffix, ArgKind, ArgShape, LoopShape};

/// One argument's code, split so that device wrappers can place the parts
/// apart (declarations outside a thread's `if`, scatters under a colour guard).
pub struct ArgCode {
    /// Declares the staging value `s{k}` (and the target index `t{k}`).
    pub decl: String,
    /// Fills the staging value for element `e`.
    pub fill: String,
    /// Writes the staging value back; `None` for READ.
    pub scatter: Option<String>,
}

/// Whether argument `a` goes through a map (fixed or ragged) or is read
/// whole: whether the wrapper gets a `map{k}` (for a whole Dat, its count).
pub fn is_indirect(a: &ArgShape) -> bool {
    matches!(
        a.kind,
        ArgKind::MapEntry { .. } | ArgKind::MapAll { .. } | ArgKind::Ragged | ArgKind::Whole
    )
}

/// `op2_ragged_inc_<type>(p, v)` for each element type the loop's ragged
/// INC arguments have: `*p += v`, or the `op2_atomic_add_<type>` helper
/// (which the caller must define first) when `atomic`. `global` is the
/// address-space qualifier of the data.
pub fn ragged_inc_helpers(shape: &LoopShape, atomic: bool) -> String {
    let mut s = String::new();
    let mut done = Vec::new();
    for a in shape
        .args
        .iter()
        .filter(|a| a.kind == ArgKind::Ragged && a.access == Access::Inc)
    {
        if done.contains(&a.scalar) {
            continue;
        }
        done.push(a.scalar);
        let (t, sfx) = (c_type(a.scalar), helper_suffix(a.scalar));
        let body = if atomic {
            format!("op2_atomic_add_{sfx}(p, v);")
        } else if wraps_in_c(a.scalar) {
            "*p += v;".to_string()
        } else {
            format!("*p = op2_wrapping_add_{sfx}(*p, v);")
        };
        let _ = writeln!(
            s,
            "{FUNCTION} void {}({GLOBAL} {t} *p, {t} v) {{ {body} }}",
            c_interface::ragged_inc(sfx)
        );
    }
    s
}

/// The code of argument `k`; `atomic` makes its scatter use the
/// `op2_atomic_<op>_<type>` helpers (for INC, MIN and MAX through maps).
pub fn arg_code(k: usize, a: &ArgShape, atomic: bool) -> ArgCode {
    let (decl, fill) = gather(k, a, Staging::One);
    ArgCode {
        decl,
        fill,
        scatter: scatter(k, a, atomic && is_indirect(a), Staging::One),
    }
}

/// Declares the kernel's failure record `op2_st` (code, index, length; see
/// [`C_PRELUDE`](super::C_PRELUDE)): one per element.
pub const STATUS_DECL: &str = "long op2_st[3] = {0, 0, 0};\n";

/// The kernel call on the staging values (a ragged argument passes its
/// data, the element's targets and their count), then `on_failure` when a
/// check failed (checked mode; `None` leaves the record unread, and the
/// compiler drops it).
pub fn kernel_call(kernel_name: &str, args: &[ArgShape], on_failure: Option<&str>) -> String {
    let call: Vec<String> = std::iter::once("op2_st".to_string())
        .chain(args.iter().enumerate().map(|(k, a)| match a.kind {
            ArgKind::Ragged => format!("arg{k}, tgt{k} + o{k}, n{k}"),
            // Whole: the kernel's `OP2_TGT_<param>` ignores the targets.
            ArgKind::Whole => format!("arg{k}, 0, n{k}"),
            _ => format!("s{k}"),
        }))
        .collect();
    let mut s = format!("{}({});\n", c_interface::kernel_function(kernel_name), call.join(", "));
    if let Some(f) = on_failure {
        let _ = writeln!(s, "if (op2_st[0]) {{ {f} }}");
    }
    s
}

/// Writes `code` with every line indented by `ind`.
pub fn push_indented(s: &mut String, ind: &str, code: &str) {
    for line in code.lines() {
        let _ = writeln!(s, "{ind}{line}");
    }
}

/// Writes the body of the host element loop: each argument's gather, the
/// call (and `on_failure`, see [`kernel_call`]), and each argument's scatter.
/// What the kernel may read in place it gets in place ([`in_place`]).
pub fn element_body(s: &mut String, kernel_name: &str, shape: &LoopShape, on_failure: Option<&str>) {
    let ind = "            ";
    push_indented(s, ind, STATUS_DECL);
    let codes: Vec<ArgCode> = shape
        .args
        .iter()
        .enumerate()
        .map(|(k, a)| match in_place(k, a) {
            Some(pointer) => ArgCode {
                decl: pointer,
                fill: String::new(),
                scatter: None,
            },
            None => arg_code(k, a, false),
        })
        .collect();
    for c in &codes {
        push_indented(s, ind, &c.decl);
        push_indented(s, ind, &c.fill);
    }
    push_indented(s, ind, &kernel_call(kernel_name, &shape.args, on_failure));
    for c in &codes {
        if let Some(sc) = &c.scatter {
            push_indented(s, ind, sc);
        }
    }
}

/// The host's pointer `s{k}` to where argument `k` lives, for the arguments
/// a kernel can use in place with the staged value's result: a READ (no
/// element of the loop writes its Dat, one mode per Dat; a Global READ is a
/// constant) and a direct RW (the element's own values, written by no other
/// element). Copying them would only cost loads and stores (res_calc 10 %
/// on Airfoil). Device code stages everything: its kernels take private
/// pointers.
pub(super) fn in_place(k: usize, a: &ArgShape) -> Option<String> {
    let t = c_type(a.scalar);
    let d = a.dim;
    let at = match (a.kind, a.access) {
        // Columns (device only) have no pointer to an element's values.
        _ if a.columns => return None,
        (ArgKind::Direct, Access::Read | Access::Rw) => format!("arg{k} + e * {d}"),
        (ArgKind::MapEntry { arity, index }, Access::Read) => {
            format!("arg{k} + (long)map{k}[e * {arity} + {index}] * {d}")
        }
        (ArgKind::Global { slot: None }, _) => format!("arg{k}"),
        _ => return None,
    };
    Some(format!("{t} *s{k} = {at};\n"))
}

/// Where a staging value's component lives: one element's `s{k}[c]` (and
/// target `t{k}`), or lane `l` of a vector group's lane-strided
/// `s{k}[c][l]` (component `c` of a table's entry `i`: row `i * D + c`; its
/// target `t{k}[l]`), whose declarations are the caller's.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Staging {
    One,
    Lanes,
}

impl Staging {
    /// Component `c` (of entry `i` when `entry` is given, of `dim` values
    /// each) of argument `k`.
    fn at(self, k: usize, entry: Option<&str>, dim: usize, c: &str) -> String {
        match (self, entry) {
            (Staging::One, None) => format!("s{k}[{c}]"),
            (Staging::One, Some(i)) => format!("s{k}[{i}][{c}]"),
            (Staging::Lanes, None) => format!("s{k}[{c}][l]"),
            (Staging::Lanes, Some(i)) => format!("s{k}[{i} * {dim} + {c}][l]"),
        }
    }

    fn target(self, k: usize) -> String {
        match self {
            Staging::One => format!("t{k}"),
            Staging::Lanes => format!("t{k}[l]"),
        }
    }
}

/// Component `c` of element `at` in argument `k`'s data: `at * dim + c`
/// in rows, `at + c * stride{k}` in columns ([`ArgShape::columns`]).
fn value_at(k: usize, a: &ArgShape, at: &str, c: &str) -> String {
    if a.columns {
        format!("arg{k}[{at} + {c} * stride{k}]")
    } else {
        format!("arg{k}[{at} * {} + {c}]", a.dim)
    }
}

/// Declares (first string; empty for [`Staging::Lanes`]) and fills (second)
/// staging value `s{k}` for element `e`.
pub(super) fn gather(k: usize, a: &ArgShape, staging: Staging) -> (String, String) {
    let t = c_type(a.scalar);
    let d = a.dim;
    let zero = matches!(a.access, Access::Write | Access::Inc);
    let one = staging == Staging::One;
    let (mut decl, mut fill) = (String::new(), String::new());
    match a.kind {
        ArgKind::Ragged => {
            let _ = writeln!(decl, "long o{k};\nint n{k};");
            let _ = writeln!(fill, "o{k} = map{k}[e];\nn{k} = (int)(map{k}[e + 1] - o{k});");
        }
        ArgKind::Whole => {
            let _ = writeln!(decl, "int n{k};");
            let _ = writeln!(fill, "n{k} = map{k}[0];");
        }
        ArgKind::MapAll { arity } => {
            if one {
                let _ = writeln!(decl, "{t} s{k}[{arity}][{d}];");
            }
            let _ = writeln!(fill, "for (int i = 0; i < {arity}; ++i) {{");
            if !zero {
                let _ = writeln!(fill, "    const long t = map{k}[e * {arity} + i];");
            }
            let src = if zero {
                "0".to_string()
            } else {
                value_at(k, a, "t", "c")
            };
            let dst = staging.at(k, Some("i"), d, "c");
            let _ = writeln!(fill, "    for (int c = 0; c < {d}; ++c) {dst} = {src};");
            let _ = writeln!(fill, "}}");
        }
        kind => {
            if one {
                let _ = writeln!(decl, "{t} s{k}[{d}];");
            }
            let target = staging.target(k);
            if let ArgKind::MapEntry { arity, index } = kind {
                if one {
                    let _ = writeln!(decl, "long t{k};");
                }
                let _ = writeln!(fill, "{target} = map{k}[e * {arity} + {index}];");
            }
            let src = match (kind, zero) {
                (_, true) if !matches!(kind, ArgKind::Global { .. }) || a.access == Access::Inc => "0".to_string(),
                (ArgKind::Direct, _) => value_at(k, a, "e", "c"),
                (ArgKind::MapEntry { .. }, _) => value_at(k, a, &target, "c"),
                (ArgKind::Global { slot: Some(_) }, _) => format!("red{k}[c]"),
                (ArgKind::Global { slot: None }, _) => format!("arg{k}[c]"),
                (ArgKind::MapAll { .. } | ArgKind::Ragged | ArgKind::Whole, _) => unreachable!(),
            };
            let dst = staging.at(k, None, d, "c");
            let _ = writeln!(fill, "for (int c = 0; c < {d}; ++c) {dst} = {src};");
        }
    }
    (decl, fill)
}

/// Writes staging value `s{k}` of element `e` back according to its access
/// mode.
pub(super) fn scatter(k: usize, a: &ArgShape, atomic: bool, staging: Staging) -> Option<String> {
    let d = a.dim;
    let sfx = helper_suffix(a.scalar);
    let combine = |dst: &str, src: &str| -> Option<String> {
        Some(match (a.access, atomic) {
            (Access::Read, _) => return None,
            (Access::Write | Access::Rw, _) => format!("{dst} = {src};"),
            (Access::Inc, false) if wraps_in_c(a.scalar) => format!("{dst} += {src};"),
            (Access::Inc, false) => format!("{dst} = op2_wrapping_add_{sfx}({dst}, {src});"),
            (Access::Min, false) => format!("{dst} = op2_min_{sfx}({dst}, {src});"),
            (Access::Max, false) => format!("{dst} = op2_max_{sfx}({dst}, {src});"),
            (Access::Inc, true) => format!("op2_atomic_add_{sfx}(&{dst}, {src});"),
            (Access::Min, true) => format!("op2_atomic_min_{sfx}(&{dst}, {src});"),
            (Access::Max, true) => format!("op2_atomic_max_{sfx}(&{dst}, {src});"),
        })
    };
    let value = staging.at(k, None, d, "c");
    let line = match a.kind {
        ArgKind::Direct => {
            combine(&value_at(k, a, "e", "c"), &value).map(|c| format!("for (int c = 0; c < {d}; ++c) {c}"))
        }
        ArgKind::MapEntry { .. } => combine(&value_at(k, a, &staging.target(k), "c"), &value)
            .map(|c| format!("for (int c = 0; c < {d}; ++c) {c}")),
        ArgKind::MapAll { arity } => combine(
            &value_at(k, a, &format!("(long)map{k}[e * {arity} + i]"), "c"),
            &staging.at(k, Some("i"), d, "c"),
        )
        .map(|c| format!("for (int i = 0; i < {arity}; ++i) for (int c = 0; c < {d}; ++c) {c}")),
        ArgKind::Global { slot: Some(_) } => {
            combine(&format!("red{k}[c]"), &value).map(|c| format!("for (int c = 0; c < {d}; ++c) {c}"))
        }
        ArgKind::Global { slot: None } | ArgKind::Ragged | ArgKind::Whole => None,
    };
    line.map(|l| l + "\n")
}

/// Whether C's `+` on `t` means what Rust's does in a release build: floats
/// and unsigned integers; a signed overflow is undefined in C, so signed
/// increments go through the prelude's `op2_wrapping_add_<type>`.
fn wraps_in_c(t: op2_kernel_abi::ScalarType) -> bool {
    !op2_kernel_abi::KernelScalar::of(t).is_signed_int()
}
