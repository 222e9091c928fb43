//! The per-element part of every generated wrapper: gather each argument
//! into a staging array, call the kernel, scatter back by access mode
//! (DESIGN.md section 4). The surrounding code declares, for argument `k`,
//! `arg{k}` (its data), `map{k}` (its map) and `red{k}` (its reduction slot),
//! and the element index `e`.

use std::fmt::Write as _;

use op2_core::Access;

use super::{c_type, helper_suffix, ArgKind, ArgShape, LoopShape};

/// Writes the body of the element loop.
pub fn element_body(s: &mut String, kernel_name: &str, shape: &LoopShape) {
    let mut call = Vec::new();
    for (k, a) in shape.args.iter().enumerate() {
        gather(s, k, a);
        call.push(format!("s{k}"));
    }
    let _ = writeln!(s, "            op2_kernel_{kernel_name}({});", call.join(", "));
    for (k, a) in shape.args.iter().enumerate() {
        scatter(s, k, a);
    }
}

/// Declares and fills staging value `s{k}`.
fn gather(s: &mut String, k: usize, a: &ArgShape) {
    let t = c_type(a.scalar);
    let d = a.dim;
    let ind = "            ";
    let zero = matches!(a.access, Access::Write | Access::Inc);
    match a.kind {
        ArgKind::MapAll { arity } => {
            let _ = writeln!(s, "{ind}{t} s{k}[{arity}][{d}];");
            let _ = writeln!(s, "{ind}for (int i = 0; i < {arity}; ++i) {{");
            if !zero {
                let _ = writeln!(s, "{ind}    const long t = map{k}[e * {arity} + i];");
            }
            let src = if zero {
                "0".to_string()
            } else {
                format!("arg{k}[t * {d} + c]")
            };
            let _ = writeln!(s, "{ind}    for (int c = 0; c < {d}; ++c) s{k}[i][c] = {src};");
            let _ = writeln!(s, "{ind}}}");
        }
        kind => {
            let _ = writeln!(s, "{ind}{t} s{k}[{d}];");
            let src = match (kind, zero) {
                (_, true) if !matches!(kind, ArgKind::Global { .. }) || a.access == Access::Inc => "0".to_string(),
                (ArgKind::Direct, _) => format!("arg{k}[e * {d} + c]"),
                (ArgKind::MapEntry { arity, index }, _) => {
                    let _ = writeln!(s, "{ind}const long t{k} = map{k}[e * {arity} + {index}];");
                    format!("arg{k}[t{k} * {d} + c]")
                }
                (ArgKind::Global { slot: Some(_) }, _) => format!("red{k}[c]"),
                (ArgKind::Global { slot: None }, _) => format!("arg{k}[c]"),
                (ArgKind::MapAll { .. }, _) => unreachable!(),
            };
            let _ = writeln!(s, "{ind}for (int c = 0; c < {d}; ++c) s{k}[c] = {src};");
        }
    }
    if let (ArgKind::MapEntry { arity, index }, true) = (a.kind, zero) {
        let _ = writeln!(s, "{ind}const long t{k} = map{k}[e * {arity} + {index}];");
    }
}

/// Writes staging value `s{k}` back according to its access mode.
fn scatter(s: &mut String, k: usize, a: &ArgShape) {
    let d = a.dim;
    let ind = "            ";
    let sfx = helper_suffix(a.scalar);
    let combine = |dst: &str, src: &str| -> Option<String> {
        Some(match a.access {
            Access::Read => return None,
            Access::Write | Access::Rw => format!("{dst} = {src};"),
            Access::Inc => format!("{dst} += {src};"),
            Access::Min => format!("{dst} = op2_min_{sfx}({dst}, {src});"),
            Access::Max => format!("{dst} = op2_max_{sfx}({dst}, {src});"),
        })
    };
    let line = match a.kind {
        ArgKind::Direct => combine(&format!("arg{k}[e * {d} + c]"), &format!("s{k}[c]"))
            .map(|c| format!("for (int c = 0; c < {d}; ++c) {c}")),
        ArgKind::MapEntry { .. } => combine(&format!("arg{k}[t{k} * {d} + c]"), &format!("s{k}[c]"))
            .map(|c| format!("for (int c = 0; c < {d}; ++c) {c}")),
        ArgKind::MapAll { arity } => combine(
            &format!("arg{k}[map{k}[e * {arity} + i] * {d} + c]"),
            &format!("s{k}[i][c]"),
        )
        .map(|c| format!("for (int i = 0; i < {arity}; ++i) for (int c = 0; c < {d}; ++c) {c}")),
        ArgKind::Global { slot: Some(_) } => {
            combine(&format!("red{k}[c]"), &format!("s{k}[c]")).map(|c| format!("for (int c = 0; c < {d}; ++c) {c}"))
        }
        ArgKind::Global { slot: None } => None,
    };
    if let Some(l) = line {
        let _ = writeln!(s, "{ind}{l}");
    }
}
