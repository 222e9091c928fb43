//! A spatial message list's build on a device, in either device dialect:
//! the counting sort that bins the senders (bin per sender and histogram
//! by atomic increments, a prefix sum, a scatter), the canonical order
//! inside each bin (by sender id, or index); and a lookup of a table by
//! each sender's bin (which rank owns it, which ranks read it). The
//! scatter's atomics leave each bin in an arbitrary order; the per-bin sort
//! that follows makes it the host build's order, bit for bit.
//! The prefix sum over the bins is the utility prelude's one-block
//! `op2_scan`; the gather of carried Dats is the reordering program's.

use op2_core::ScalarType;

use super::c_type;
use super::spatial_c::SPATIAL_C;
use super::utility_c::{utility_prelude, DeviceLanguage};

/// The entry points, in the order [`binning_source`] defines them.
pub const BINNING_ENTRIES: [&str; 6] = [
    "op2_fill_zero",
    "op2_scan",
    "op2_bin_count",
    "op2_bin_scatter",
    "op2_bin_canonical",
    "op2_bin_lookup",
];

/// The build's program for positions of type `position` with `dims` (2 or
/// 3) coordinates each:
///
/// ```c
/// op2_bin_count(long n, long nbins, const int *flags, const T *pos, const double *grid,
///               uint *bins, uint *counts)             // bins[e], counts[bin]++ (flags may be null)
/// op2_bin_scatter(long n, const uint *bins, const int *starts, uint *cursor, uint *order)
/// op2_bin_canonical(long nbins, const int *starts, uint *order, const long *ids)  // ids may be null
/// op2_bin_lookup(long n, long nbins, const T *pos, const double *grid, const int *table,
///                int *out)                            // out[e] = table[bin of e], -1 for no bin
/// ```
///
/// with `op2_fill_zero` and `op2_scan` (the bins' starts) from the utility
/// prelude.
pub fn binning_source(language: DeviceLanguage, position: ScalarType, dims: usize) -> String {
    let t = c_type(position);
    let z = if dims == 3 { "(double)pos[e * 3 + 2]" } else { "0.0" };
    format!(
        "/* op2: a spatial message build ({lang:?}, {dims}-D {t} positions) */
{prelude}#define OP2_NO_BIN 0xffffffffu
{SPATIAL_C}
/* The bin of sender e; -1 outside (only a grid that disagrees with nbins). */
OP2_FN long op2_sender_bin(long e, long nbins, OP2_GLOBAL const {t} *pos, OP2_GLOBAL const double *grid) {{
    double g[8];
    for (int i = 0; i < 8; ++i) g[i] = grid[i];
    int wrap = g[7] != 0.0;
    long bx = op2_axis_bin((double)pos[e * {dims}], g[0], g[3], g[4], wrap);
    long by = op2_axis_bin((double)pos[e * {dims} + 1], g[1], g[3], g[5], wrap);
    long bz = g[6] > 1.0 ? op2_axis_bin({z}, g[2], g[3], g[6], wrap) : 0;
    long b = bx + (long)g[4] * (by + (long)g[5] * bz);
    return b < 0 || b >= nbins ? -1 : b;
}}
OP2_ENTRY op2_bin_count(long n, long nbins, OP2_GLOBAL const int *flags, OP2_GLOBAL const {t} *pos,
                        OP2_GLOBAL const double *grid, OP2_GLOBAL uint *bins, OP2_GLOBAL uint *counts) {{
    long e = OP2_GID;
    if (e >= n) return;
    if (flags && flags[e] == 0) {{ bins[e] = OP2_NO_BIN; return; }}
    long b = op2_sender_bin(e, nbins, pos, grid);
    if (b < 0) {{ bins[e] = OP2_NO_BIN; return; }}
    bins[e] = (uint)b;
    OP2_INC(&counts[b]);
}}
OP2_ENTRY op2_bin_scatter(long n, OP2_GLOBAL const uint *bins, OP2_GLOBAL const int *starts,
                          OP2_GLOBAL uint *cursor, OP2_GLOBAL uint *order) {{
    long e = OP2_GID;
    if (e >= n) return;
    uint b = bins[e];
    if (b == OP2_NO_BIN) return;
    uint k = OP2_INC(&cursor[b]);
    order[starts[b] + k] = (uint)e;
}}
OP2_ENTRY op2_bin_canonical(long nbins, OP2_GLOBAL const int *starts, OP2_GLOBAL uint *order,
                            OP2_GLOBAL const long *ids) {{
    long b = OP2_GID;
    if (b >= nbins) return;
    long lo = starts[b], hi = starts[b + 1];
    for (long i = lo + 1; i < hi; ++i) {{
        uint v = order[i];
        long key = ids ? ids[v] : (long)v;
        long j = i - 1;
        while (j >= lo && (ids ? ids[order[j]] : (long)order[j]) > key) {{ order[j + 1] = order[j]; --j; }}
        order[j + 1] = v;
    }}
}}
OP2_ENTRY op2_bin_lookup(long n, long nbins, OP2_GLOBAL const {t} *pos, OP2_GLOBAL const double *grid,
                         OP2_GLOBAL const int *table, OP2_GLOBAL int *out) {{
    long e = OP2_GID;
    if (e >= n) return;
    long b = op2_sender_bin(e, nbins, pos, grid);
    out[e] = b < 0 ? -1 : table[b];
}}
",
        lang = language,
        prelude = utility_prelude(language),
    )
}
