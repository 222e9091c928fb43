//! Compile-time errors of `#[op2::kernel]` and `par_loop!`: each case in
//! `tests/ui/` must fail to compile with the message in its `.stderr` file.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
