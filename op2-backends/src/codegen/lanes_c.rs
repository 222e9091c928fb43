//! The host wrapper's vector path: elements run [`LANES`] at a time. Each
//! argument is gathered for all lanes into a lane-strided staging array
//! (`s{k}[c][l]`: component `c` of lane `l`, so one component of all lanes
//! is one vector), the kernel runs across the lanes in a `#pragma omp simd`
//! loop, and the staging arrays are scattered back lane by lane, in element
//! order. The elements left over at the end of a block run one at a time, as
//! on the scalar path.
//!
//! The kernel the lanes call is a second copy of the translated kernel,
//! `op2_kernel_<name>_lanes`, compiled with `OP2_IX(i, n)` (how the
//! translator indexes a parameter; kernel-local arrays use `OP2_IX_LOCAL`)
//! redefined to `i * LANES`: each parameter pointer points at its lane in
//! the staging array, and its component `c` is `LANES` values further per
//! step. With unit-stride lanes the compiler vectorises the kernel's
//! arithmetic without shuffles; staged element by element (`s{k}[l][c]`)
//! it did not (a C model of Airfoil's `res_calc` on 2 threads: 7.4 ms
//! element-major, 4.2 ms lane-strided, 7.0 ms one element at a time).
//!
//! Increments of four `f64`s through a map (Airfoil's `res_calc`) scatter
//! as vectors: four lanes' columns are transposed in registers into four
//! rows and each row is added to its target with one vector add (the same
//! model: 5.3 ms with scalar adds).
//!
//! The result is bitwise the scalar path's: each lane does the scalar
//! element's operations (no reassociation: no `-ffast-math`, contraction
//! off; a vector add is four scalar adds), and the scatters add, assign and
//! reduce in the same order. That holds only where no element of a group
//! can see another's write before the group's scatter, which
//! [`lanes_apply`] checks.

use std::fmt::Write as _;

use op2_core::{Access, ScalarType};
use op2_kernel_abi::c_interface::{self, INDEX};

use super::element::{gather, push_indented, scatter, Staging};
use super::{c_type, ArgKind, ArgShape, Checks, LoopShape};

/// Elements per group: four `f64`s fill an AVX2 register, and a multiple of
/// four is what the vector scatter transposes.
pub const LANES: usize = 4;

/// Whether a loop of this shape may run its elements in groups.
///
/// Gathering a whole group before any element of it scatters is what the
/// scalar path computes only if no element reads what an earlier one in
/// its group writes. READ and INC through a map are safe (one mode per Dat:
/// nothing in the loop reads a Dat it increments, and the kernel's
/// increments start from zero); RW, WRITE, MIN and MAX through a map or
/// into a Global read or overwrite values an earlier element may have just
/// changed. Ragged and whole arguments have per-element lengths, and
/// checked loops report per element: those stay scalar, and so do direct
/// loops, which are bound by memory bandwidth. So do loops with a whole
/// table (`&[[T; D]; A]`): the lane kernel strides both of its indices,
/// which steps past the bounds of its `T[D]` rows.
pub fn lanes_apply(shape: &LoopShape, checks: Checks) -> bool {
    checks == Checks::Off
        && shape.args.iter().any(|a| matches!(a.kind, ArgKind::MapEntry { .. }))
        && shape.args.iter().all(|a| match a.kind {
            ArgKind::Direct => true,
            ArgKind::MapEntry { .. } | ArgKind::Global { .. } => matches!(a.access, Access::Read | Access::Inc),
            ArgKind::MapAll { .. } | ArgKind::Ragged | ArgKind::Whole => false,
        })
}

/// The lane kernel: `kernel_c` (the translated kernel, named
/// `op2_kernel_<name>`) renamed `op2_kernel_<name>_lanes`, with parameter
/// indices strided by [`LANES`]; `OP2_IX` is restored after it.
pub fn lanes_kernel(kernel_name: &str, kernel_c: &str) -> String {
    let function = c_interface::kernel_function(kernel_name);
    let renamed = kernel_c.replacen(&format!("{function}("), &format!("{function}_lanes("), 1);
    format!("#undef {INDEX}\n#define {INDEX}(i, n) ((i) * {LANES})\nstatic inline {renamed}\n#undef {INDEX}\n#define {INDEX}(i, n) (i)\n")
}

/// Whether argument `a` scatters as vectors: an increment of four `f64`s
/// through one map entry.
fn vector_inc(a: &ArgShape) -> bool {
    a.access == Access::Inc && a.dim == 4 && a.scalar == ScalarType::F64 && matches!(a.kind, ArgKind::MapEntry { .. })
}

/// The helpers of the vector scatter, for loops that have one: `op2_v4d`,
/// `op2_rows4` (four lanes' rows from four lane-strided columns) and
/// `op2_add4` (a row added to four unaligned doubles).
pub fn lanes_helpers(shape: &LoopShape) -> &'static str {
    if shape.args.iter().any(vector_inc) {
        VECTOR_HELPERS
    } else {
        ""
    }
}

const VECTOR_HELPERS: &str = r#"typedef double op2_v4d __attribute__((vector_size(32)));
#ifdef __clang__
#define OP2_SHUFFLE4(a, b, i, j, k, l) __builtin_shufflevector(a, b, i, j, k, l)
#else
typedef long long op2_v4l __attribute__((vector_size(32)));
#define OP2_SHUFFLE4(a, b, i, j, k, l) __builtin_shuffle(a, b, (op2_v4l){i, j, k, l})
#endif
/* row[l] = (col[0][l], col[1][l], col[2][l], col[3][l]), col[c] = col + c * stride */
static inline void op2_rows4(const double *col, long stride, op2_v4d *row)
{
    op2_v4d a, b, c, d;
    __builtin_memcpy(&a, col, sizeof a);
    __builtin_memcpy(&b, col + stride, sizeof b);
    __builtin_memcpy(&c, col + 2 * stride, sizeof c);
    __builtin_memcpy(&d, col + 3 * stride, sizeof d);
    const op2_v4d ab0 = OP2_SHUFFLE4(a, b, 0, 4, 2, 6), ab1 = OP2_SHUFFLE4(a, b, 1, 5, 3, 7);
    const op2_v4d cd0 = OP2_SHUFFLE4(c, d, 0, 4, 2, 6), cd1 = OP2_SHUFFLE4(c, d, 1, 5, 3, 7);
    row[0] = OP2_SHUFFLE4(ab0, cd0, 0, 1, 4, 5);
    row[1] = OP2_SHUFFLE4(ab1, cd1, 0, 1, 4, 5);
    row[2] = OP2_SHUFFLE4(ab0, cd0, 2, 3, 6, 7);
    row[3] = OP2_SHUFFLE4(ab1, cd1, 2, 3, 6, 7);
}
static inline void op2_add4(double *p, op2_v4d v)
{
    op2_v4d x;
    __builtin_memcpy(&x, p, sizeof x);
    x += v;
    __builtin_memcpy(p, &x, sizeof x);
}
"#;

/// Writes the group loop for the unit's positions `start..end`: whole
/// groups from `start`, leaving `p0` at the first position it did not run
/// (the caller's scalar loop runs from there).
pub fn lanes_loop(s: &mut String, kernel_name: &str, shape: &LoopShape) {
    let ind = "        ";
    let inner = "            ";
    let element = if shape.subset {
        "const long e = elems[p0 + l];"
    } else {
        "const long e = p0 + l;"
    };
    let (mut decls, mut fills, mut call) = (String::new(), String::new(), vec!["op2_st".to_string()]);
    for (k, a) in shape.args.iter().enumerate() {
        let t = c_type(a.scalar);
        let d = a.dim;
        match a.kind {
            // A constant of one value: the kernel reads it where it is.
            ArgKind::Global { slot: None } if d == 1 => call.push(format!("arg{k}")),
            // A constant of several: one lane-strided copy per run.
            ArgKind::Global { slot: None } => {
                let _ = writeln!(s, "{ind}{t} s{k}[{d}][{LANES}];");
                let _ = writeln!(
                    s,
                    "{ind}for (int c = 0; c < {d}; ++c) for (int l = 0; l < {LANES}; ++l) s{k}[c][l] = arg{k}[c];"
                );
                call.push(format!("&s{k}[0][l]"));
            }
            _ => {
                let _ = writeln!(decls, "{t} s{k}[{d}][{LANES}];");
                if matches!(a.kind, ArgKind::MapEntry { .. }) {
                    let _ = writeln!(decls, "long t{k}[{LANES}];");
                }
                fills.push_str(&gather(k, a, Staging::Lanes).1);
                call.push(format!("&s{k}[0][l]"));
            }
        }
    }
    let _ = writeln!(s, "{ind}long p0 = start;");
    let _ = writeln!(s, "{ind}for (; p0 + {LANES} <= end; p0 += {LANES}) {{");
    push_indented(s, inner, &decls);
    let lanes = |s: &mut String, from: &str, to: &str, body: &str| {
        let _ = writeln!(s, "{inner}for (int l = {from}; l < {to}; ++l) {{");
        push_indented(s, &format!("{inner}    "), element);
        push_indented(s, &format!("{inner}    "), body);
        let _ = writeln!(s, "{inner}}}");
    };
    lanes(s, "0", &LANES.to_string(), &fills);
    let _ = writeln!(s, "{inner}#pragma omp simd");
    let _ = writeln!(s, "{inner}for (int l = 0; l < {LANES}; ++l) {{");
    let _ = writeln!(s, "{inner}    long op2_st[3] = {{0, 0, 0}};");
    let function = c_interface::kernel_function(kernel_name);
    let _ = writeln!(s, "{inner}    {function}_lanes({});", call.join(", "));
    let _ = writeln!(s, "{inner}}}");
    write_scatters(s, shape);
    let _ = writeln!(s, "{ind}}}");
}

/// The group's scatters, lane by lane in element order; an increment of
/// four `f64`s adds rows transposed four lanes at a time.
fn write_scatters(s: &mut String, shape: &LoopShape) {
    let inner = "            ";
    let element = if shape.subset {
        "const long e = elems[p0 + l];"
    } else {
        "const long e = p0 + l;"
    };
    let (mut rows, mut body) = (String::new(), String::new());
    for (k, a) in shape.args.iter().enumerate() {
        if vector_inc(a) {
            let _ = writeln!(rows, "op2_v4d r{k}[4];\nop2_rows4(&s{k}[0][q], {LANES}, r{k});");
            let _ = writeln!(body, "op2_add4(arg{k} + t{k}[l] * 4, r{k}[l - q]);");
        } else if !matches!(a.kind, ArgKind::Global { slot: None }) {
            if let Some(sc) = scatter(k, a, false, Staging::Lanes) {
                body.push_str(&sc);
            }
        }
    }
    if body.is_empty() {
        return;
    }
    let _ = writeln!(s, "{inner}for (int q = 0; q < {LANES}; q += 4) {{");
    let deeper = format!("{inner}    ");
    push_indented(s, &deeper, &rows);
    let _ = writeln!(s, "{deeper}for (int l = q; l < q + 4; ++l) {{");
    push_indented(s, &format!("{deeper}    "), element);
    push_indented(s, &format!("{deeper}    "), "(void)e;");
    push_indented(s, &format!("{deeper}    "), &body);
    let _ = writeln!(s, "{deeper}}}");
    let _ = writeln!(s, "{inner}}}");
}
