//! The host wrapper's vector path: elements run [`LANES`] at a time. Each
//! argument is gathered for all lanes into staging arrays, the kernel runs
//! across the lanes in a `#pragma omp simd` loop (so the compiler executes
//! `LANES` elements' arithmetic in vector registers), and the staging arrays
//! are scattered back lane by lane, in element order. The elements left over
//! at the end of a block run one at a time, as on the scalar path.
//!
//! The result is bitwise the scalar path's: each lane does the scalar
//! element's operations (no reassociation: no `-ffast-math`, contraction
//! off), and the scatters add, assign and reduce in the same order. That
//! holds only where no element of a group can see another's write before
//! the group's scatter, which [`lanes_apply`] checks.

use std::fmt::Write as _;

use op2_core::Access;

use super::element::{gather, push_indented, scatter};
use super::{c_type, ArgKind, ArgShape, Checks, LoopShape};

/// Elements per group: 8 doubles fill two AVX2 registers or one AVX-512
/// register (OP2's vectorised CPU code uses the same width).
pub const LANES: usize = 8;

/// Whether a loop of this shape may run its elements in groups.
///
/// Gathering a whole group before any element of it scatters is what the
/// scalar path computes only if no element reads what an earlier one in
/// its group writes. READ through a map is safe (one mode per Dat: nothing
/// in the loop writes that Dat); RW, MIN and MAX through a map or into a
/// Global read the value an earlier element may have just changed. Ragged
/// and whole arguments have per-element lengths, and checked loops report
/// per element: those stay scalar. Of the rest, only loops that gather
/// through a map and write through none take groups, as the native
/// backends do (`par_loop!`'s `Lanes`): measured on Airfoil, the staging
/// of increments through maps (`res_calc`) costs more than the vector
/// arithmetic saves, and direct loops are bound by memory bandwidth.
pub fn lanes_apply(shape: &LoopShape, checks: Checks) -> bool {
    let through_map = |a: &&ArgShape| matches!(a.kind, ArgKind::MapEntry { .. } | ArgKind::MapAll { .. });
    checks == Checks::Off
        && shape.args.iter().any(|a| through_map(&a))
        && shape.args.iter().all(|a| match a.kind {
            ArgKind::Direct => true,
            ArgKind::MapEntry { .. } | ArgKind::MapAll { .. } => a.access == Access::Read,
            ArgKind::Global { .. } => matches!(a.access, Access::Read | Access::Inc),
            ArgKind::Ragged | ArgKind::Whole => false,
        })
}

/// Writes the group loop for the unit's positions `start..end`: whole
/// groups from `start`, leaving `p0` at the first position it did not run
/// (the caller's scalar loop runs from there).
pub fn lanes_loop(s: &mut String, kernel_name: &str, shape: &LoopShape) {
    let ind = "        ";
    let element = if shape.subset {
        "const long e = elems[p0 + l];"
    } else {
        "const long e = p0 + l;"
    };
    let _ = writeln!(s, "{ind}long p0 = start;");
    let _ = writeln!(s, "{ind}for (; p0 + {LANES} <= end; p0 += {LANES}) {{");
    let inner = "            ";
    let (mut fills, mut scatters, mut call) = (String::new(), String::new(), vec!["op2_st".to_string()]);
    for (k, a) in shape.args.iter().enumerate() {
        let t = c_type(a.scalar);
        let d = a.dim;
        if matches!(a.kind, ArgKind::Global { slot: None }) {
            // A constant: one copy for the whole group.
            let (decl, fill) = gather(k, a, "");
            push_indented(s, inner, &decl);
            push_indented(s, inner, &fill);
            call.push(format!("s{k}"));
            continue;
        }
        match a.kind {
            ArgKind::MapAll { arity } => {
                let _ = writeln!(s, "{inner}{t} s{k}[{LANES}][{arity}][{d}];");
            }
            ArgKind::MapEntry { .. } => {
                let _ = writeln!(s, "{inner}{t} s{k}[{LANES}][{d}];\n{inner}long t{k}[{LANES}];");
            }
            _ => {
                let _ = writeln!(s, "{inner}{t} s{k}[{LANES}][{d}];");
            }
        }
        fills.push_str(&gather(k, a, "[l]").1);
        if let Some(sc) = scatter(k, a, false, "[l]") {
            scatters.push_str(&sc);
        }
        call.push(format!("s{k}[l]"));
    }
    let lanes = |s: &mut String, body: &str| {
        let _ = writeln!(s, "{inner}for (int l = 0; l < {LANES}; ++l) {{");
        push_indented(s, &format!("{inner}    "), element);
        push_indented(s, &format!("{inner}    "), body);
        let _ = writeln!(s, "{inner}}}");
    };
    lanes(s, &fills);
    let _ = writeln!(s, "{inner}#pragma omp simd");
    let _ = writeln!(s, "{inner}for (int l = 0; l < {LANES}; ++l) {{");
    let _ = writeln!(s, "{inner}    long op2_st[3] = {{0, 0, 0}};");
    let _ = writeln!(s, "{inner}    op2_kernel_{kernel_name}({});", call.join(", "));
    let _ = writeln!(s, "{inner}}}");
    if !scatters.is_empty() {
        lanes(s, &scatters);
    }
    let _ = writeln!(s, "{ind}}}");
}
