//! What every utility program (the device work around loops: message
//! builds, compactions) starts with, in either device dialect: the
//! spellings that differ between OpenCL and CUDA (from the dialect's table,
//! `dialect.rs`), a fill with zeros and a one-block prefix sum. Every entry point takes only `long`s and global
//! pointers (8 bytes each on both APIs).

/// The threads of the one block that runs `op2_scan`, and of every block
/// of the selection entry points (which scan inside their block).
pub const SCAN_THREADS: usize = 256;

pub use super::dialect::DeviceLanguage;

/// The start of a utility program in `language`:
///
/// ```c
/// op2_fill_zero(long n, uint *p)                                   // p[0..n) = 0
/// op2_scan(long n, const uint *counts, int *starts, int *total)   // one block: exclusive sum, starts[n] = total
/// ```
pub fn utility_prelude(language: DeviceLanguage) -> String {
    let words = language.dialect().utility_words();
    format!(
        "{words}
OP2_ENTRY op2_fill_zero(long n, OP2_GLOBAL uint *p) {{
    long i = OP2_GID;
    if (i < n) p[i] = 0;
}}
OP2_ENTRY op2_scan(long n, OP2_GLOBAL const uint *counts, OP2_GLOBAL int *starts, OP2_GLOBAL int *total) {{
    OP2_SHARED uint part[{threads}];
    long t = OP2_LID, per = (n + {threads} - 1) / {threads};
    long lo = t * per, hi = lo + per < n ? lo + per : n;
    uint sum = 0;
    for (long b = lo; b < hi; ++b) sum += counts[b];
    part[t] = sum;
    OP2_SYNC;
    if (t == 0) {{
        uint run = 0;
        for (int i = 0; i < {threads}; ++i) {{ uint c = part[i]; part[i] = run; run += c; }}
        starts[n] = (int)run;
        total[0] = (int)run;
    }}
    OP2_SYNC;
    uint run = part[t];
    for (long b = lo; b < hi; ++b) {{ starts[b] = (int)run; run += counts[b]; }}
}}
",
        threads = SCAN_THREADS
    )
}
