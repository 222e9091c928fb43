//! The device side of finishing a reduction, in either device dialect: one
//! block folds a loop's per-block partials of one Global, in a fixed order,
//! into the Global's device copy. The Global stays on the device; the host
//! downloads it only when it reads the value (the state machine of
//! `op2-core`), so a loop with a reduction never waits for the host.

use op2_core::{Access, ScalarType};

use super::device_c::combine_expr;
use super::utility_c::DeviceLanguage;
use super::{c_type, C_PRELUDE};

/// Threads of the one block that folds the partials (fewer where the
/// device's blocks are smaller).
pub const FOLD_THREADS: usize = 256;

/// The entry points of [`reduction_source`], in order: INC, MIN, MAX.
pub const FOLD_ENTRIES: [&str; 3] = ["op2_fold_inc", "op2_fold_min", "op2_fold_max"];

/// The index in [`FOLD_ENTRIES`] of the fold for `access`.
///
/// # Panics
/// If `access` is not a reduction (INC, MIN or MAX).
pub fn fold_entry(access: Access) -> usize {
    match access {
        Access::Inc => 0,
        Access::Min => 1,
        Access::Max => 2,
        other => unreachable!("no fold for {other:?}"),
    }
}

/// The folds of partials of type `t` (`T` below), one entry per reduction:
///
/// ```c
/// // one block of `threads` threads; partial c of unit u is partials[u * stride + first + c]
/// op2_fold_inc(long units, long stride, long first, long dim, const T *partials, T *g)
/// ```
///
/// Thread `t` folds units `t, t + threads, ...` in order, the block
/// then folds the threads' results in a fixed tree, and thread 0 folds that
/// into `g[c]`: the same order on every run, whatever the scheduling.
pub fn reduction_source(language: DeviceLanguage, t: ScalarType, threads: usize) -> String {
    let dialect = language.dialect();
    let ty = c_type(t);
    let mut s = format!("/* op2: folding reduction partials of {ty} ({language:?}) */\n");
    // The loops' prelude (math names, the min and max helpers), then the
    // utility programs' words (which define `OP2_FN` the same way again).
    (dialect.prelude)(&mut s);
    s.push_str(C_PRELUDE);
    s.push_str(&dialect.utility_words());
    for (entry, access) in FOLD_ENTRIES.iter().zip([Access::Inc, Access::Min, Access::Max]) {
        let op = |a: &str, b: &str| combine_expr(access, t, a, b);
        s.push_str(&format!(
            "OP2_ENTRY {entry}(long units, long stride, long first, long dim,
                   OP2_GLOBAL const {ty} *partials, OP2_GLOBAL {ty} *g) {{
    OP2_SHARED {ty} x[{threads}];
    long t = OP2_LID;
    long n = units < {threads} ? units : {threads};
    long top = 1;
    while (top < n) top <<= 1;
    top >>= 1;
    for (long c = 0; c < dim; ++c) {{
        {ty} acc = 0;
        if (t < n) {{
            acc = partials[t * stride + first + c];
            for (long u = t + {threads}; u < units; u += {threads}) acc = {fold};
        }}
        OP2_SYNC;
        x[t] = acc;
        OP2_SYNC;
        for (long h = top; h > 0; h >>= 1) {{
            if (t < h && t + h < n) x[t] = {tree};
            OP2_SYNC;
        }}
        if (t == 0 && n > 0) g[c] = {last};
    }}
}}
",
            fold = op("acc", "partials[u * stride + first + c]"),
            tree = op("x[t]", "x[t + h]"),
            last = op("g[c]", "x[0]"),
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_fold_combines_with_its_access_and_reads_its_type() {
        let src = reduction_source(DeviceLanguage::OpenCl, ScalarType::F32, 64);
        for entry in FOLD_ENTRIES {
            assert!(src.contains(&format!("OP2_ENTRY {entry}(")), "{entry}");
        }
        assert!(src.contains("OP2_GLOBAL const float *partials"));
        assert!(src.contains("OP2_SHARED float x[64];"));
        assert!(src.contains("g[c] = g[c] + x[0]"));
        assert!(src.contains("g[c] = op2_min_f32(g[c], x[0])"));
        assert!(src.contains("g[c] = op2_max_f32(g[c], x[0])"));
        assert_eq!(fold_entry(Access::Max), 2);
    }
}
