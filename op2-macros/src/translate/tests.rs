use super::*;
use crate::signature::parse_param;

fn c_of(src: &str) -> String {
    let f: ItemFn = syn::parse_str(src).unwrap();
    let params: Vec<Param> = f.sig.inputs.iter().map(|a| parse_param(a).unwrap()).collect();
    translate(&f, &params).unwrap_or_else(|e| panic!("{}", e[0]))
}

fn errors_of(src: &str) -> Vec<String> {
    let f: ItemFn = syn::parse_str(src).unwrap();
    let params: Vec<Param> = f.sig.inputs.iter().map(|a| parse_param(a).unwrap()).collect();
    translate(&f, &params)
        .err()
        .unwrap_or_default()
        .iter()
        .map(|e| e.to_string())
        .collect()
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
    assert!(c.contains("if (((*b) == 1)) {"), "{c}");
    assert!(
        c.contains("} else if (((*b) == 2)) {") || c.contains("else if (((*b) == 2)) {"),
        "{c}"
    );
    assert!(c.contains("return;"), "{c}");
    assert!(c.contains("for (int i = 0, i_end = 4; i < i_end; ++i) {"), "{c}");
    assert!(c.contains("for (int j = 1, j_end = 3; j <= j_end; ++j) {"), "{c}");
    assert!(c.contains("while ((n < 10)) {") && c.contains("for (;;) {"), "{c}");
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
    assert!(c.contains("m[OP2_IX(2, 3)][OP2_IX(1, 2)] = a[OP2_IX(1, 4)];"), "{c}");
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
    assert!(c.contains("a[OP2_IX(1, N)]"), "{c}");
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
        c.contains("int f = ((*a) > 0);") && c.contains("if ((!f))") && c.contains("(*r) = (~(*a));"),
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
    ] {
        assert!(c.contains(call), "{call} in {c}");
    }
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
