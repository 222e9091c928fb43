//! Tests of the translation to C: the C text each construct becomes, what
//! a translation records that it uses, and the errors for what the
//! translator refuses.

use super::*;
use crate::signature::parse_param;

fn c_of(src: &str) -> String {
    translation(src, false).unwrap_or_else(|e| panic!("{}", e[0])).0
}

fn translation(src: &str, portable_math: bool) -> Result<(String, Uses), Vec<syn::Error>> {
    let f: ItemFn = syn::parse_str(src).unwrap();
    let params: Vec<Param> = f.sig.inputs.iter().map(|a| parse_param(a).unwrap()).collect();
    translate(&f, &params, portable_math)
}

#[test]
fn portable_math_calls_op2_functions_and_keeps_exact_ones() {
    let k = "fn k(x: &mut f64, y: &mut f32, n: &i32) {
        *x = x.sin() + f64::exp(*x) + x.powi(*n) + x.sqrt() + x.powf(0.5);
        *y = (y.ln() + y.cos()).floor();
    }";
    let (c, uses) = translation(k, true).unwrap_or_else(|e| panic!("{}", e[0]));
    assert!(uses.portable_math);
    for call in [
        "op2_pm_sin((*x))",
        "op2_pm_exp((*x))",
        "op2_pm_powi((*x), (*n))",
        "sqrt((*x))",
        "op2_pm_powf((*x), 0.5)",
        "op2_pm_ln_f32((*y))",
        "op2_pm_cos_f32((*y))",
        "floorf(",
    ] {
        assert!(c.contains(call), "{call} in {c}");
    }
    assert!(!uses_of(k).portable_math);
    let Err(e) = translation("fn k(x: &mut f64) { *x = x.tanh(); }", true) else {
        panic!("tanh has no portable version")
    };
    let msg = e[0].to_string();
    assert!(
        msg.contains("`tanh` has no portable version") && msg.contains("sin, cos, tan"),
        "{msg}"
    );
}

fn uses_of(src: &str) -> Uses {
    let f: ItemFn = syn::parse_str(src).unwrap();
    let params: Vec<Param> = f.sig.inputs.iter().map(|a| parse_param(a).unwrap()).collect();
    translate(&f, &params, false).unwrap_or_else(|e| panic!("{}", e[0])).1
}

fn errors_of(src: &str) -> Vec<String> {
    let f: ItemFn = syn::parse_str(src).unwrap();
    let params: Vec<Param> = f.sig.inputs.iter().map(|a| parse_param(a).unwrap()).collect();
    translate(&f, &params, false)
        .err()
        .unwrap_or_default()
        .iter()
        .map(|e| e.to_string())
        .collect()
}

#[test]
fn uses_record_named_lengths_and_slices() {
    let k = "fn k(a: &[f64; N], t: &[[i32; D]; A], l: &[f32; 3], r: &[[f64; M]], s: &mut [f64], q: &[f64]) {
        let x = a[0] + l[0] + r[0][1] + (t[1][0] as f64);
        for v in q { s[0] += *v + x; }
    }";
    let u = uses_of(k);
    assert_eq!(u.named_dims, ["a", "t", "r"]);
    assert_eq!(u.named_arities, ["t"]);
    assert_eq!(u.slices, ["r", "q", "s"]);
    assert!(!u.random_streams && !u.spatial_queries);
    let c = c_of(k);
    for name in [
        "OP2_DIM_a",
        "OP2_DIM_t",
        "OP2_ARITY_t",
        "OP2_DIM_r",
        "OP2_TGT_r",
        "OP2_TGT_s",
        "OP2_TGT_q",
    ] {
        assert!(c.contains(name), "{name} in {c}");
    }
    assert!(!c.contains("OP2_DIM_l"), "{c}");
    // A slice never indexed needs no macro.
    assert!(uses_of("fn k(s: &[f64], n: &mut i32) { *n = s.len() as i32; }")
        .slices
        .is_empty());
}

#[test]
fn parameters_become_pointers() {
    let c = c_of("fn k(a: &f64, b: &mut [f32; 3], t: &[[i32; 2]; 4], u: &mut u32) {}");
    assert!(
        c.starts_with(
            "void op2_kernel_k(long *op2_status, const double *a, float *b, const int (*t)[2], unsigned int *u) {"
        ),
        "{c}"
    );
}

#[test]
fn float_remainders_are_fmod() {
    let c = c_of("fn k(a: &mut f64, b: &mut f32, n: &mut i32) { *a = *a % 3.0; *b %= 2.5; *n = *n % 4; }");
    assert!(c.contains("(*a) = fmod((*a), 3.0);"), "{c}");
    assert!(
        c.contains("(*b) = ((float)fmod((double)((*b)), (double)(2.5f)));"),
        "{c}"
    );
    assert!(c.contains("op2_rem_i32((*n), 4, op2_status)"), "{c}");
}

#[test]
fn scalars_are_dereferenced_and_everything_parenthesised() {
    let c = c_of("fn k(a: &f64, b: &mut f64) { *b = *a * 2.0 + a; }");
    assert!(c.contains("(*b) = (((*a) * 2.0) + (*a));"), "{c}");
}

#[test]
fn literals_take_the_type_of_their_partner() {
    let c = c_of("fn k(x: &mut [f32; 2]) { x[0] = x[1] * 0.5 + 1.0; let y = 2.0f64; let n = 3; }");
    assert!(
        c.contains("x[OP2_IX(0, 2)] = ((x[OP2_IX(1, 2)] * 0.5f) + 1.0f);"),
        "{c}"
    );
    assert!(c.contains("double y = 2.0;"), "{c}");
    assert!(c.contains("int n = 3;"), "{c}");
}

#[test]
fn let_types_are_inferred_from_parameters() {
    let c = c_of("fn k(q: &[f64; 4], r: &mut f64) { let ri = 1.0 / q[0]; let mut s = ri; s += q[1]; *r = s; }");
    assert!(c.contains("double ri = (1.0 / q[OP2_IX(0, 4)]);"), "{c}");
    assert!(c.contains("double s = ri;"), "{c}");
    assert!(c.contains("s += q[OP2_IX(1, 4)];"), "{c}");
}

#[test]
fn math_methods_and_functions() {
    let c = c_of(
        "fn k(x: &mut f64, y: &mut f32, i: &mut i32) {
            *x = x.sqrt().abs().powi(3) + f64::max(*x, 1.0) + x.mul_add(2.0, 3.0) + x.ln() + x.atan2(1.0);
            *y = y.sqrt() + f32::min(*y, 0.5) + y.powf(2.0);
            *i = i.abs().max(2) + (*i).min(7);
        }",
    );
    assert!(c.contains("pow(fabs(sqrt((*x))), ((double)3))"), "{c}");
    assert!(
        c.contains("fmax((*x), 1.0)") && c.contains("fma((*x), 2.0, 3.0)") && c.contains("log((*x))"),
        "{c}"
    );
    assert!(c.contains("atan2((*x), 1.0)"), "{c}");
    assert!(
        c.contains("sqrtf((*y))") && c.contains("fminf((*y), 0.5f)") && c.contains("powf((*y), 2.0f)"),
        "{c}"
    );
    assert!(
        c.contains("op2_max_i32(op2_abs_i32((*i)), 2)") && c.contains("op2_min_i32((*i), 7)"),
        "{c}"
    );
}

#[test]
fn constants_and_casts() {
    let c = c_of("fn k(x: &mut f64, n: &i32) { const N: usize = 4; const H: f64 = 0.5; *x = (*n as f64) * H + std::f64::consts::PI + N as f64; }");
    assert!(c.contains("enum { N = 4ul };"), "{c}");
    assert!(c.contains("const double H = 0.5;"), "{c}");
    assert!(c.contains("((double)(*n))") && c.contains("3.141592653589793e0"), "{c}");
}

#[test]
fn control_flow() {
    let c = c_of(
        "fn k(b: &i32, x: &mut f64) {
            if *b == 1 { *x = 1.0; } else if *b == 2 { *x = 2.0; } else { return; }
            for i in 0..4 { if i == 2 { continue; } *x += 1.0; }
            for j in 1..=3 { *x -= 0.5; }
            let mut n = 0;
            while n < 10 { n += 1; if n > 5 { break; } }
            loop { break; }
        }",
    );
    // One pair of parentheses around a condition (clang warns on two around `==`).
    assert!(c.contains("if ((*b) == 1) {"), "{c}");
    assert!(c.contains("else if ((*b) == 2) {"), "{c}");
    assert!(c.contains("while (n < 10) {"), "{c}");
    assert!(c.contains("return;"), "{c}");
    assert!(c.contains("for (int i = 0, i_end = 4; i < i_end; ++i) {"), "{c}");
    assert!(
        c.contains("for (int j = 1, j_end = 3, j_go = j <= j_end; j_go; j_go = j != j_end, j += j_go) {"),
        "{c}"
    );
    assert!(c.contains("for (;;) {"), "{c}");
}

#[test]
fn if_as_a_value() {
    let c = c_of(
        "fn k(a: &f64, r: &mut f64) {
            let s = if *a > 0.0 { 1.0 } else { -1.0 };
            let t = if *a > 1.0 { let u = *a * 2.0; u } else { 0.0 };
            *r = s * t + if *a < 0.0 { 1.0 } else { 2.0 };
        }",
    );
    assert!(
        c.contains("double s;") && c.contains("s = 1.0;") && c.contains("s = (-1.0);"),
        "{c}"
    );
    assert!(c.contains("double u = ((*a) * 2.0);") && c.contains("t = u;"), "{c}");
    assert!(c.contains("((*a) < 0.0) ? 1.0 : 2.0"), "{c}");
}

#[test]
fn local_arrays() {
    let c = c_of(
        "fn k(r: &mut [f64; 2]) {
            let mut a = [0.0; 4];
            let b = [1.0, 2.0];
            let mut m = [[0.0f64; 2]; 3];
            a[1] = b[0]; m[2][1] = a[1]; r[0] = m[2][1];
        }",
    );
    assert!(c.contains("double a[4];") && c.contains("a[op2_i0] = 0.0;"), "{c}");
    assert!(c.contains("double b[2] = {1.0, 2.0};"), "{c}");
    assert!(
        c.contains("double m[3][2];") && c.contains("m[op2_i0_1][op2_i1] = 0.0;"),
        "{c}"
    );
    assert!(
        c.contains("m[OP2_IX_LOCAL(2, 3)][OP2_IX_LOCAL(1, 2)] = a[OP2_IX_LOCAL(1, 4)];"),
        "{c}"
    );
    assert!(
        c.contains("r[OP2_IX(0, 2)] = m[OP2_IX_LOCAL(2, 3)][OP2_IX_LOCAL(1, 2)];"),
        "{c}"
    );
}

#[test]
fn indices_are_checked_against_their_array_length() {
    let c = c_of(
        "fn k(v: &[[f64; NDIM]; 3], w: &mut [f64; NW], i: &i32) {
            const N: usize = 2;
            let a = [0.0; N];
            w[*i as usize] = v[2][1] + a[1];
        }",
    );
    assert!(c.contains("w[OP2_IX((unsigned long)(*i), OP2_DIM_w)]"), "{c}");
    assert!(c.contains("v[OP2_IX(2, 3)][OP2_IX(1, OP2_DIM_v)]"), "{c}");
    assert!(c.contains("a[OP2_IX_LOCAL(1, N)]"), "{c}");
    let c = c_of("fn k(v: &[[f64; 2]; NV], r: &mut f64) { *r = v[1][0]; }");
    assert!(c.contains("v[OP2_IX(1, OP2_ARITY_v)][OP2_IX(0, 2)]"), "{c}");
}

#[test]
fn float_to_int_casts_saturate_like_rust() {
    let c = c_of("fn k(x: &f64, y: &f32, a: &mut i32, b: &mut u32, c: &mut f64) { *a = *x as i32; *b = *y as u32; let n = 1e20 as u64; *c = *a as f64; }");
    assert!(c.contains("(*a) = op2_as_i32((double)((*x)));"), "{c}");
    assert!(c.contains("(*b) = op2_as_u32((double)((*y)));"), "{c}");
    assert!(c.contains("unsigned long n = op2_as_u64((double)(1e20));"), "{c}");
    assert!(c.contains("(*c) = ((double)(*a));"), "{c}");
}

#[test]
fn integer_division_goes_through_helpers() {
    let c = c_of("fn k(a: &i32, b: &mut i32, x: &mut f64) { *b = *a / *b; *b %= 3; let n = 7u64 / 2; *x = *x / 2.0; }");
    assert!(c.contains("(*b) = op2_div_i32((*a), (*b), op2_status);"), "{c}");
    assert!(c.contains("(*b) = op2_rem_i32((*b), 3, op2_status);"), "{c}");
    assert!(c.contains("op2_div_u64(7ul, 2ul, op2_status)"), "{c}");
    assert!(c.contains("(*x) = ((*x) / 2.0);"), "{c}");
}

#[test]
fn reserved_names_and_shadowing_are_renamed() {
    let c = c_of("fn k(int: &f64, r: &mut f64) { let float = *int; let x = 1.0; let x = x + float; *r = x; }");
    assert!(c.contains("const double *op2_int"), "{c}");
    assert!(c.contains("double op2_float = (*op2_int);"), "{c}");
    assert!(
        c.contains("double x = 1.0;") && c.contains("double x_1 = (x + op2_float);"),
        "{c}"
    );
    assert!(c.contains("(*r) = x_1;"), "{c}");
    // C++ keywords too: NVRTC compiles CUDA C++.
    let c = c_of("fn k(new: &f64, r: &mut f64) { let this = *new; let class = this * 2.0; *r = class; }");
    assert!(
        c.contains("const double *op2_new") && c.contains("double op2_this = (*op2_new);"),
        "{c}"
    );
    assert!(c.contains("double op2_class = "), "{c}");
}

#[test]
fn boolean_and_bitwise_not() {
    let c = c_of("fn k(a: &i32, r: &mut i32) { let f = *a > 0; if !f { *r = !*a; } }");
    assert!(
        c.contains("int f = ((*a) > 0);") && c.contains("if (!f)") && c.contains("(*r) = (~(*a));"),
        "{c}"
    );
}

#[test]
fn named_dims() {
    let c =
        c_of("fn k(v: &[[f64; NDIM]; 3], r: &mut f64) { const N: usize = 2; let a = [0.0; N]; *r = v[0][1] + a[1]; }");
    assert!(c.contains("const double (*v)[OP2_DIM_v]"), "{c}");
    assert!(c.contains("double a[N];"), "{c}");
    let e = errors_of("fn k(r: &mut f64) { let a = [0.0; OUTSIDE]; *r = a[0]; }");
    assert!(
        e[0].contains("`OUTSIDE` must be a literal or a `const` declared inside the kernel"),
        "{e:?}"
    );
}

#[test]
fn unknown_names_and_int_for_float_are_errors() {
    let e = errors_of("fn k(r: &mut f64) { *r = GAMMA * 2.0; }");
    assert!(e[0].contains("`GAMMA` is not known"), "{e:?}");
    let e = errors_of("fn k(r: &mut f64) { *r = 2; }");
    assert!(e[0].contains("write `2.0`"), "{e:?}");
    let e = errors_of("fn k(r: &mut i32) { *r = r.sqrt(); }");
    assert!(e[0].contains("needs a float"), "{e:?}");
}

#[test]
fn random_streams_become_prelude_calls() {
    let c = c_of(
        "fn k(x: &mut f64, n: &mut u32, id: &i64, seed: &i64) {
            let mut rng = op2::Philox::new(*seed as u64, *id as u64, 3);
            *x = rng.uniform_f64() + rng.uniform_f32() as f64;
            *n = rng.below(6) + rng.next_u32();
            if rng.bernoulli(0.5) { *n = 0; }
            *x += rng.normal_f64() * (rng.normal_f32() as f64);
        }",
    );
    assert!(
        c.contains("op2_philox rng = op2_philox_new(((unsigned long)(*seed)), ((unsigned long)(*id)), 3u);"),
        "{c}"
    );
    for call in [
        "op2_philox_uniform_f64(&rng)",
        "op2_philox_uniform_f32(&rng)",
        "op2_philox_below(&rng, 6u)",
        "op2_philox_u32(&rng)",
        "op2_philox_bernoulli(&rng, 0.5)",
        "op2_philox_normal_f64(&rng)",
        "op2_philox_normal_f32(&rng)",
    ] {
        assert!(c.contains(call), "{call} in {c}");
    }
    let u = uses_of(
        "fn k(x: &mut f64, id: &i64) { let mut rng = op2::Philox::new(1, *id as u64, 3); *x = rng.uniform_f64(); }",
    );
    assert!(u.random_streams && !u.spatial_queries);
}

#[test]
fn misused_random_streams_are_errors() {
    let e = errors_of("fn k(x: &mut f64) { let mut rng = Philox::new(1, 2); *x = rng.uniform_f64(); }");
    assert!(
        e.iter().any(|m| m.contains("a seed, a global id and a call number")),
        "{e:?}"
    );
    let e = errors_of("fn k(x: &mut f64) { let mut rng = Philox::new(1, 2, 3); *x = rng.uniform_f64(4.0); }");
    assert!(
        e.iter()
            .any(|m| m.contains("wrong number of arguments for `.uniform_f64()`")),
        "{e:?}"
    );
    let e = errors_of("fn k(x: &mut f64) { let mut rng = Philox::new(1, 2, 3); *x = rng.sqrt(); }");
    assert!(
        e.iter()
            .any(|m| m.contains("`.sqrt()` is not a draw of a `Philox` stream")),
        "{e:?}"
    );
}

#[test]
fn ragged_read_rank_1() {
    let c = c_of(
        "fn k(x: &[f64], r: &mut f64, n: &mut u32) {
            *n = x.len() as u32;
            let mut s = 0.0;
            for j in 0..x.len() { s += x[j]; }
            for v in x.iter() { s += *v * 2.0; }
            for &v in x { s += v; }
            *r = s + x[0];
        }",
    );
    assert!(
        c.starts_with(
            "void op2_kernel_k(long *op2_status, OP2_GLOBAL const double *x, OP2_GLOBAL const int *x_targets, int x_len, double *r, unsigned int *n) {"
        ),
        "{c}"
    );
    assert!(c.contains("(*n) = ((unsigned int)((unsigned long)x_len));"), "{c}");
    assert!(
        c.contains("for (unsigned long j = 0ul, j_end = ((unsigned long)x_len); j < j_end; ++j) {"),
        "{c}"
    );
    assert!(c.contains("s += x[OP2_TGT_x(x_targets, OP2_IX(j, x_len))];"), "{c}");
    assert!(c.contains("for (int op2_j = 0; op2_j < x_len; ++op2_j) {"), "{c}");
    assert!(c.contains("const double v = x[OP2_TGT_x(x_targets, op2_j)];"), "{c}");
    assert!(c.contains("s += (v * 2.0);"), "{c}");
    assert!(c.contains("for (int op2_j_1 = 0; op2_j_1 < x_len; ++op2_j_1) {"), "{c}");
    assert!(c.contains("const double v = x[OP2_TGT_x(x_targets, op2_j_1)];"), "{c}");
    assert!(c.contains("s += v;"), "{c}");
    assert!(
        c.contains("(*r) = (s + x[OP2_TGT_x(x_targets, OP2_IX(0, x_len))]);"),
        "{c}"
    );
}

#[test]
fn ragged_read_rank_2() {
    let c = c_of(
        "fn k(p: &[[f32; 3]], q: &[[f64; NQ]], r: &mut [f32; 3]) {
            for v in p { for k in 0..3 { r[k] += v[k]; } }
            for j in 0..p.len() { r[0] += p[j][2] * (p[j].len() as f32); }
            for w in q.iter() { r[1] += w[0] as f32; }
        }",
    );
    assert!(
        c.contains(
            "OP2_GLOBAL const float *p, OP2_GLOBAL const int *p_targets, int p_len, OP2_GLOBAL const double *q, OP2_GLOBAL const int *q_targets, int q_len, float *r)"
        ),
        "{c}"
    );
    assert!(
        c.contains("OP2_GLOBAL const float *v = p + (long)OP2_TGT_p(p_targets, op2_j) * 3;"),
        "{c}"
    );
    assert!(c.contains("r[OP2_IX(k, 3)] += v[OP2_IX(k, 3)];"), "{c}");
    assert!(
        c.contains("(p + (long)OP2_TGT_p(p_targets, OP2_IX(j, p_len)) * 3)[OP2_IX(2, 3)]"),
        "{c}"
    );
    assert!(c.contains("((float)((unsigned long)3))"), "{c}");
    assert!(
        c.contains("OP2_GLOBAL const double *w = q + (long)OP2_TGT_q(q_targets, op2_j_1) * OP2_DIM_q;"),
        "{c}"
    );
    assert!(c.contains("w[OP2_IX(0, OP2_DIM_q)]"), "{c}");
}

#[test]
fn ragged_inc_adds_through_the_wrapper_helper() {
    let c = c_of(
        "fn k(a: &f64, x: &mut [f64], y: &mut [[i32; 2]], n: &mut i64) {
            *n = (x.len() + y.len()) as i64;
            for j in 0..x.len() { x[j] += *a * 2.0; x[j] -= 1.0; }
            for j in 0..y.len() { y[j][1] -= 3; (y[j])[0] += 1; }
        }",
    );
    assert!(
        c.contains(
            "const double *a, OP2_GLOBAL double *x, OP2_GLOBAL const int *x_targets, int x_len, OP2_GLOBAL int *y, OP2_GLOBAL const int *y_targets, int y_len, long *n)"
        ),
        "{c}"
    );
    assert!(
        c.contains("op2_ragged_inc_f64(&x[OP2_TGT_x(x_targets, OP2_IX(j, x_len))], ((*a) * 2.0));"),
        "{c}"
    );
    assert!(
        c.contains("op2_ragged_inc_f64(&x[OP2_TGT_x(x_targets, OP2_IX(j, x_len))], (-(1.0)));"),
        "{c}"
    );
    assert!(
        c.contains(
            "op2_ragged_inc_i32(&(y + (long)OP2_TGT_y(y_targets, OP2_IX(j, y_len)) * 2)[OP2_IX(1, 2)], op2_wrapping_neg_i32(3));"
        ),
        "{c}"
    );
    assert!(
        c.contains("op2_ragged_inc_i32(&(y + (long)OP2_TGT_y(y_targets, OP2_IX(j, y_len)) * 2)[OP2_IX(0, 2)], 1);"),
        "{c}"
    );
}

#[test]
fn mutable_ragged_parameters_are_only_added_to() {
    for body in [
        "*r = x[0];",
        "x[0] = 1.0;",
        "x[0] *= 2.0;",
        "for v in x.iter() { *r += *v; }",
        "*r = x[0] + 1.0;",
        "x[x[0] as usize] += 1.0;",
    ] {
        let e = errors_of(&format!("fn k(x: &mut [f64], r: &mut f64) {{ {body} }}"));
        assert!(
            e.iter().any(|m| m.contains("INC argument: it can only be added to")),
            "{body}: {e:?}"
        );
    }
    let e = errors_of("fn k(y: &mut [[f64; 2]], r: &mut f64) { *r = y[0][1]; y[0][1] = 2.0; }");
    assert_eq!(e.len(), 2, "{e:?}");
    assert!(e.iter().all(|m| m.contains("INC argument")), "{e:?}");
    let e = errors_of("fn k(y: &mut [[f64; 2]]) { y[0] += 1.0; }");
    assert!(e[0].contains("is a row"), "{e:?}");
}

#[test]
fn ragged_parameters_are_not_values() {
    let e = errors_of("fn k(x: &[f64], r: &mut f64) { *r = x.sqrt(); }");
    assert!(e[0].contains("not a value"), "{e:?}");
    let e = errors_of("fn k(r: &mut f64) { let a = [1.0; 3]; for v in a { *r += v; } }");
    assert!(e[0].contains("0..a.len()"), "{e:?}");
    let e = errors_of("fn k(r: &mut f64) { *r = r.len() as f64; }");
    assert!(e[0].contains("`.len()` is defined on arrays"), "{e:?}");
}

#[test]
fn len_of_arrays() {
    let c = c_of(
        "fn k(q: &[f64; 4], t: &[[f64; 2]; NT], r: &mut i64) { let a = [[0; 3]; 5]; *r = (q.len() + t.len() + t[0].len() + a[1].len()) as i64; }",
    );
    assert!(
        c.contains("((unsigned long)4)") && c.contains("((unsigned long)OP2_ARITY_t)"),
        "{c}"
    );
    assert!(
        c.contains("((unsigned long)2)") && c.contains("((unsigned long)3)"),
        "{c}"
    );
}

/// The ragged forms compile as C (with the wrappers' definitions reduced to
/// plain C) and compute what the Rust kernel computes.
#[test]
fn ragged_kernels_compile_and_run_as_c() {
    let kernel = c_of(
        "fn k(x: &[f64], p: &[[f64; 2]], out: &mut [f64], r: &mut f64) {
            let mut s = 0.0;
            for &v in x.iter() { s += v; }
            for v in p { s += v[0] * v[1]; }
            for j in 0..x.len() { out[j] += x[j] * 10.0; out[j] -= 1.0; }
            *r = s + (x.len() as f64) * 1000.0 + p[1][1];
        }",
    );
    let dir = std::env::temp_dir().join(format!("op2-macros-ragged-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("ragged.c");
    let exe = dir.join("ragged");
    let program = format!(
        "#include <stdio.h>\n#define OP2_GLOBAL\n#define OP2_IX(i, n) (i)\n#define OP2_IX_LOCAL(i, n) (i)\n#define OP2_TGT_x(t, j) (t)[j]\n#define OP2_TGT_p(t, j) (t)[j]\n#define OP2_TGT_out(t, j) (t)[j]\n\
         static void op2_ragged_inc_f64(double *p, double v) {{ *p += v; }}\n\
         {kernel}\n\
         int main(void) {{\n\
             double x[4] = {{1.0, 2.0, 4.0, 8.0}}; int xt[3] = {{3, 0, 2}};\n\
             double p[6] = {{1.0, 2.0, 3.0, 4.0, 5.0, 6.0}}; int pt[2] = {{2, 0}};\n\
             double out[4] = {{0.0, 0.0, 0.0, 0.0}}; int ot[3] = {{1, 1, 3}};\n\
             long status = 0; double r = 0.0;\n\
             op2_kernel_k(&status, x, xt, 3, p, pt, 2, out, ot, 3, &r);\n\
             printf(\"%g %g %g %g %g\\n\", r, out[0], out[1], out[2], out[3]);\n\
             return 0;\n\
         }}\n"
    );
    std::fs::write(&src, program).unwrap();
    let cc = std::env::var("OP2_CC").unwrap_or_else(|_| "cc".to_string());
    let built = std::process::Command::new(cc)
        .args(["-O1", "-Wall", "-Werror", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .expect("a C compiler");
    assert!(
        built.status.success(),
        "{}\n{kernel}",
        String::from_utf8_lossy(&built.stderr)
    );
    let run = std::process::Command::new(&exe).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    // s = (8 + 1 + 4) + (5*6 + 1*2) = 45; r = 45 + 3000 + p[0][1] = 3047;
    // out[1] gets x[3]*10-1 and x[0]*10-1, out[3] gets x[2]*10-1.
    assert_eq!(String::from_utf8_lossy(&run.stdout).trim(), "3047 0 88 0 39");
}

#[test]
fn array_assignments_copy_every_element() {
    let c = c_of(
        "fn k(out: &mut [i64; 3], t: &mut [[f64; 2]; 2], p: &[[f64; 2]]) { let f = [1i64; 3]; *out = f; t[1] = p[0]; *out = [4, 5, 6]; }",
    );
    assert!(c.contains("for (long op2_c0 = 0; op2_c0 < 3; ++op2_c0) {"), "{c}");
    // The parameter side of a copy indexes through OP2_IX (host vector
    // groups stride it), the local side directly.
    assert!(c.contains("(out)[OP2_IX(op2_c0, 3)] = (f)[op2_c0];"), "{c}");
    assert!(
        c.contains("(t[OP2_IX(1, 2)])[OP2_IX(op2_c0_1, 2)] = ((p + (long)OP2_TGT_p(p_targets, OP2_IX(0, p_len)) * 2))[OP2_IX(op2_c0_1, 2)];"),
        "{c}"
    );
    assert!(c.contains("const long op2_lit[3] = {4L, 5L, 6L};"), "{c}");
    let errs = errors_of("fn k(out: &mut [f64; 3], b: &[f64; 2]) { *out = *b; }");
    assert!(errs.iter().any(|e| e.contains("same shape")), "{errs:?}");
}

#[test]
fn spatial_loops_walk_the_strips() {
    let src = "fn k(p: &[f32; 3], n: &mut i32, op2_bins_m: &[i32], op2_grid_m: &[f64; 8]) {
        let m = Spatial3d::new(op2_bins_m, op2_grid_m);
        for j in m.near(p[0], p[1], p[2]) { if j > 3 { continue; } *n += 1; }
    }";
    let c = c_of(src);
    // `op2_` names are the generator's: the hidden parameters are renamed.
    assert!(
        c.contains("op2_spatial m = op2_spatial_new(op2_op2_bins_m, op2_op2_grid_m);"),
        "{c}"
    );
    assert!(
        c.contains("op2_near op2_near = op2_spatial_near(&m, (double)(p[OP2_IX(0, 3)]), (double)(p[OP2_IX(1, 3)]), (double)(p[OP2_IX(2, 3)]));"),
        "{c}"
    );
    assert!(c.contains("while (op2_near_next(&op2_near, &op2_at)) {"), "{c}");
    assert!(c.contains("const unsigned long j = (unsigned long)op2_at;"), "{c}");
    let bad = errors_of(
        "fn k(p: &[f32; 3], op2_bins_m: &[i32], op2_grid_m: &[f64; 8]) {
            let m = Spatial3d::new(op2_bins_m, op2_grid_m);
            for j in m.near(p[0], p[1]) {}
            let x = m.near(1.0, 2.0, 3.0);
        }",
    );
    assert!(
        bad.iter()
            .any(|e| e.contains("`.near(x, y, z)` of a `Spatial3d` takes 3 arguments")),
        "{bad:?}"
    );
}

#[test]
fn discrete_loops_walk_the_cells_within() {
    let src = "fn k(p: &[i32; 2], r: &i32, n: &mut i32, op2_bins_m: &[i32], op2_grid_m: &[f64; 8]) {
        let m = Discrete2d::new(op2_bins_m, op2_grid_m);
        for j in m.within(p[0], p[1] + 1, *r) { *n += j as i32; }
    }";
    let c = c_of(src);
    assert!(
        c.contains("op2_spatial m = op2_spatial_new(op2_op2_bins_m, op2_op2_grid_m);"),
        "{c}"
    );
    assert!(
        c.contains("op2_within op2_near = op2_spatial_within(&m, (long)(p[OP2_IX(0, 2)]), (long)(op2_wrapping_add_i32(p[OP2_IX(1, 2)], 1)), (long)((*r)));"),
        "{c}"
    );
    assert!(c.contains("while (op2_within_next(&op2_near, &op2_at)) {"), "{c}");
    let bad = errors_of(
        "fn k(p: &[f32; 2], op2_bins_m: &[i32], op2_grid_m: &[f64; 8]) {
            let m = Discrete2d::new(op2_bins_m, op2_grid_m);
            for j in m.within(p[0], 1, 2) {}
            for j in m.near(1, 2) {}
            for j in m.within(1, 2) {}
        }",
    );
    assert!(
        bad.iter().any(|e| e.contains("takes integer cells and radius")),
        "{bad:?}"
    );
    assert!(
        bad.iter()
            .any(|e| e.contains("a `Discrete2d` message parameter offers `.within(x, y, r)` only")),
        "{bad:?}"
    );
    assert!(
        bad.iter()
            .any(|e| e.contains("`.within(x, y, r)` of a `Discrete2d` takes 3 arguments")),
        "{bad:?}"
    );
}

#[test]
fn constants_are_constant_expressions_and_keep_their_types() {
    let c = c_of(
        "fn k(o: &mut [f64; 2], n: &mut i32) {
        const K: i32 = 2 * 3;
        const S: usize = 1 << 4;
        const N: usize = 100_000;
        const M: i32 = -K;
        let a: [i32; S] = [0; S];
        o[0] = (N * N) as f64;
        o[1] = (S + a[1] as usize) as f64;
        *n = K * M;
    }",
    );
    // No helper calls in an enum's value: C needs a constant expression.
    assert!(c.contains("enum { K = (2 * 3) };"), "{c}");
    assert!(c.contains("enum { S = (1ul << 4) };"), "{c}");
    assert!(c.contains("enum { M = (-K) };"), "{c}");
    // Elsewhere a constant has its Rust type, not enum's `int`.
    assert!(c.contains("(((unsigned long)N) * ((unsigned long)N))"), "{c}");
    assert!(c.contains("op2_wrapping_mul_i32(K, M)"), "{c}");
}

#[test]
fn literals_are_typed_as_rust_types_them() {
    let c = c_of(
        "fn k(o: &mut f32, w: &mut i64) {
        *o = 1.0000001788139343 as f32;
        *w = -9223372036854775808i64;
    }",
    );
    // Parsed straight to f32 as rustc does, not to f64 and rounded again.
    assert!(c.contains("((float)1.0000001788139343f)"), "{c}");
    assert!(c.contains("(-9223372036854775807L - 1)"), "{c}");
    let c = c_of("fn k(a: &mut i32, b: &mut u32) { *a = i32::MIN; let w: u64 = u64::MAX; *b = u32::MAX - w as u32; }");
    assert!(c.contains("(*a) = (-2147483647 - 1);"), "{c}");
    assert!(c.contains("18446744073709551615ul") && c.contains("4294967295u"), "{c}");
    let bad = errors_of("fn k(o: &mut u32) { *o = !0u8 as u32; }");
    assert!(
        bad.iter().any(|e| e.contains("this literal's suffix names another")),
        "{bad:?}"
    );
}

#[test]
fn for_loops_stop_at_the_end_of_their_type() {
    let c = c_of("fn k(n: &u32, c: &mut u32) { for i in *n..=4294967295u32 { *c += i; } }");
    assert!(
        c.contains(
            "for (unsigned int i = (*n), i_end = 4294967295u, i_go = i <= i_end; i_go; i_go = i != i_end, i += i_go)"
        ),
        "{c}"
    );
    let bad = errors_of("fn k(c: &mut i32) { for mut i in 0..10 { i += 5; *c += 1; } }");
    assert!(bad.iter().any(|e| e.contains("cannot be `mut`")), "{bad:?}");
}

#[test]
fn locals_typed_by_literals_take_the_type_their_uses_give() {
    let c = c_of("fn k(x: &[f32; 10], o: &mut f32) { let mut acc = 0.0; for j in 0..10 { acc += x[j]; } *o = acc; }");
    assert!(c.contains("float acc = 0.0f;"), "{c}");
    assert!(c.contains("for (unsigned long j = 0ul, j_end = 10ul;"), "{c}");
    let c = c_of("fn k(o: &mut u32) { let big = 3_000_000_000; *o = big / 2; }");
    assert!(c.contains("unsigned int big = 3000000000u;"), "{c}");
    // A chain: `u` is found i64 from its use, and passes it back to `t`.
    let c = c_of("fn k(w: &mut i64) { let t = 5_000_000_000; let u = t + 1; *w = u * 2; }");
    assert!(c.contains("long t = 5000000000L;") && c.contains("long u = "), "{c}");
    // Two soft locals: `t` is found f32, and passes it to `s` through `+=`.
    let c = c_of("fn k(x: &[f32; 4], o: &mut f64) { let mut s = 0.0; let mut t = 0.0; for j in 0..4 { t = x[j]; s += t; } *o = s as f64; }");
    assert!(c.contains("float s = 0.0f;") && c.contains("float t = 0.0f;"), "{c}");
    // `m = m.abs()` says nothing of `m`'s type; `m += x[j]` does.
    let c = c_of(
        "fn k(x: &[f32; 4], o: &mut f64) { let mut m = 0.0; for j in 0..4 { m += x[j]; } m = m.abs(); *o = m as f64; }",
    );
    assert!(c.contains("float m = 0.0f;"), "{c}");
    // Nothing says otherwise: Rust's defaults.
    let c = c_of("fn k(o: &mut f64) { let a = 1.5; let mut n = 0; while n < 3 { n += 1; } *o = a * (n as f64); }");
    assert!(c.contains("double a = 1.5;") && c.contains("int n = 0;"), "{c}");
}

#[test]
fn compound_assignments_into_draws_and_const_divisions() {
    let bad = errors_of(
        "fn k(id: &i64, h: &mut [i32; 8]) { let mut s = op2::Philox::new(1, *id as u64, 3); h[s.below(8) as usize] += 1; }",
    );
    assert!(
        bad.iter().any(|e| e.contains("compute the index into a `let` first")),
        "{bad:?}"
    );
    let c = c_of("fn k(o: &mut i32) { const H: i32 = 2147483647 / 2; *o = H; }");
    assert!(c.contains("enum { H = (2147483647 / 2) };"), "{c}");
    let c = c_of("fn k(o: &mut f32) { *o = -0.1 as f32; }");
    assert!(c.contains("((float)(-0.1f))"), "{c}");
}
