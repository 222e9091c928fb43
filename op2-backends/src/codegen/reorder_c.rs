//! The device side of reordering a set's elements, in either device
//! dialect: a stable selection of the elements whose flag passes (a count
//! per block, a prefix sum over the blocks, a scan inside each block), the
//! gather of elements in a new order (from one source, or two: a set's
//! elements and records appended after them), the ids of new agents,
//! flags marked at given elements, and halos packed into records and
//! unpacked from them. Message builds, births and deaths, permutations,
//! agents moving between ranks and halo exchanges on devices use it.

use super::utility_c::{utility_prelude, DeviceLanguage, SCAN_THREADS};

/// The entry points, in the order [`reorder_source`] defines them.
pub const REORDER_ENTRIES: [&str; 10] = [
    "op2_fill_zero",
    "op2_scan",
    "op2_select_count",
    "op2_select_scatter",
    "op2_gather_words",
    "op2_fill_ids",
    "op2_mark",
    "op2_halo_pack",
    "op2_halo_unpack",
    "op2_iota",
];

/// The reordering program (one for any data: it moves 32-bit words):
///
/// ```c
/// // blocks of SCAN_THREADS: element e passes if !flags, or if ((flags[e] & mask) != 0) == when_set
/// // (when_set 0 or 1), or if flags[e] == mask (when_set 2)
/// op2_select_count(long n, const int *flags, long mask, long when_set, uint *block_counts)
/// op2_select_scatter(long n, const int *flags, long mask, long when_set, const int *block_starts, uint *out)
/// // element order[i] of src (below split), or order[i] - split of tail (null: none);
/// // past either source's elements (src_n, tail_n): skipped; a null order: element i (a copy)
/// op2_gather_words(long n, long words, const uint *order, long src_n, const uint *src,
///                  long split, long tail_n, const uint *tail, uint *dst, long dst_first)
/// op2_fill_ids(long n, long first, long first_id, long *dst)      // dst[first + i] = first_id + i
/// op2_mark(long m, const uint *idx, long n, long value, int *flags) // flags[idx[i]] = value (idx < n)
/// // a halo's records (comps values of cwords words each, element by element) from and to a Dat
/// // in rows (stride 0) or columns (component c of element e at c * stride + e):
/// op2_halo_pack(long n, long comps, long cwords, long stride, const uint *list, const uint *dat,
///               uint *records)                           // record i = element list[i]
/// op2_halo_unpack(long n, long comps, long cwords, long stride, long first, const uint *list,
///                 const uint *records, uint *dat)        // element first + i = record list[i]
/// op2_iota(long n, uint *dst)                            // dst[i] = i
/// ```
///
/// with `op2_fill_zero` and `op2_scan` from the utility prelude.
pub fn reorder_source(language: DeviceLanguage) -> String {
    format!(
        "/* op2: reordering a set's elements ({language:?}) */
{prelude}
OP2_FN int op2_passes(OP2_GLOBAL const int *flags, long e, long mask, long when_set) {{
    if (!flags) return 1;
    if (when_set == 2) return flags[e] == (int)mask;
    return ((flags[e] & (int)mask) != 0) == (when_set != 0);
}}
OP2_ENTRY op2_select_count(long n, OP2_GLOBAL const int *flags, long mask, long when_set,
                           OP2_GLOBAL uint *block_counts) {{
    OP2_SHARED uint part[{threads}];
    long e = OP2_GID, t = OP2_LID;
    part[t] = e < n && op2_passes(flags, e, mask, when_set);
    OP2_SYNC;
    for (long width = {threads} / 2; width > 0; width /= 2) {{
        if (t < width) part[t] += part[t + width];
        OP2_SYNC;
    }}
    if (t == 0) block_counts[OP2_BLOCK] = part[0];
}}
OP2_ENTRY op2_select_scatter(long n, OP2_GLOBAL const int *flags, long mask, long when_set,
                             OP2_GLOBAL const int *block_starts, OP2_GLOBAL uint *out) {{
    OP2_SHARED uint sum[{threads}];
    long e = OP2_GID, t = OP2_LID;
    uint pass = e < n && op2_passes(flags, e, mask, when_set);
    sum[t] = pass;
    OP2_SYNC;
    /* Inclusive scan inside the block (Hillis-Steele). */
    for (long d = 1; d < {threads}; d *= 2) {{
        uint add = t >= d ? sum[t - d] : 0;
        OP2_SYNC;
        sum[t] += add;
        OP2_SYNC;
    }}
    if (pass) out[block_starts[OP2_BLOCK] + sum[t] - 1] = (uint)e;
}}
OP2_ENTRY op2_gather_words(long n, long words, OP2_GLOBAL const uint *order, long src_n,
                           OP2_GLOBAL const uint *src, long split, long tail_n, OP2_GLOBAL const uint *tail,
                           OP2_GLOBAL uint *dst, long dst_first) {{
    long g = OP2_GID;
    if (g >= n * words) return;
    long i = g / words, w = g - i * words;
    long from = order ? (long)order[i] : i;
    if (tail && from >= split) {{
        from -= split;
        if (from < tail_n) dst[dst_first * words + g] = tail[from * words + w];
        return;
    }}
    if (from >= src_n) return;
    dst[dst_first * words + g] = src[from * words + w];
}}
OP2_ENTRY op2_fill_ids(long n, long first, long first_id, OP2_GLOBAL long *dst) {{
    long i = OP2_GID;
    if (i < n) dst[first + i] = first_id + i;
}}
OP2_ENTRY op2_mark(long m, OP2_GLOBAL const uint *idx, long n, long value, OP2_GLOBAL int *flags) {{
    long i = OP2_GID;
    if (i >= m) return;
    long e = idx[i];
    if (e < n) flags[e] = (int)value;
}}
OP2_FN long op2_halo_word(long e, long r, long comps, long cwords, long stride) {{
    long c = r / cwords, w = r - c * cwords;
    return stride > 0 ? (c * stride + e) * cwords + w : e * comps * cwords + r;
}}
OP2_ENTRY op2_halo_pack(long n, long comps, long cwords, long stride, OP2_GLOBAL const uint *list,
                        OP2_GLOBAL const uint *dat, OP2_GLOBAL uint *records) {{
    long g = OP2_GID, rw = comps * cwords;
    if (g >= n * rw) return;
    long i = g / rw, r = g - i * rw;
    records[g] = dat[op2_halo_word((long)list[i], r, comps, cwords, stride)];
}}
OP2_ENTRY op2_halo_unpack(long n, long comps, long cwords, long stride, long first, OP2_GLOBAL const uint *list,
                          OP2_GLOBAL const uint *records, OP2_GLOBAL uint *dat) {{
    long g = OP2_GID, rw = comps * cwords;
    if (g >= n * rw) return;
    long i = g / rw, r = g - i * rw;
    dat[op2_halo_word(first + i, r, comps, cwords, stride)] = records[(long)list[i] * rw + r];
}}
OP2_ENTRY op2_iota(long n, OP2_GLOBAL uint *dst) {{
    long i = OP2_GID;
    if (i < n) dst[i] = (uint)i;
}}
",
        prelude = utility_prelude(language),
        threads = SCAN_THREADS,
    )
}
