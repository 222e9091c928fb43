//! A spatial message list's build on a device, in either device dialect:
//! the counting sort that bins the senders (bin per sender and histogram
//! by atomic increments, a prefix sum, a scatter), the canonical order
//! inside each bin (by sender id, or index), and the gather of carried
//! Dats. The scatter's atomics leave each bin in an arbitrary order; the
//! per-bin sort that follows makes it the host build's order, bit for bit.
//!
//! Every entry point takes only `long`s and global pointers (8 bytes each
//! on both APIs) and runs one thread per element, except `op2_bin_scan`,
//! one block of [`SCAN_THREADS`].

use op2_core::ScalarType;

use super::c_type;
use super::spatial_c::SPATIAL_C;

/// The entry points, in the order [`binning_source`] defines them.
pub const BINNING_ENTRIES: [&str; 6] = [
    "op2_fill_zero",
    "op2_bin_count",
    "op2_bin_scan",
    "op2_bin_scatter",
    "op2_bin_canonical",
    "op2_gather_words",
];

/// The threads of the one block that runs `op2_bin_scan`.
pub const SCAN_THREADS: usize = 256;

/// The spellings that differ between the dialects.
const OPENCL_WORDS: &str = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define OP2_FN inline
#define OP2_GLOBAL __global
#define OP2_ENTRY __kernel void
#define OP2_SHARED __local
#define OP2_SYNC barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)
#define OP2_GID ((long)get_global_id(0))
#define OP2_LID ((long)get_local_id(0))
#define OP2_INC(p) atomic_inc(p)
";

const CUDA_WORDS: &str = "#define OP2_FN static __device__ inline
#define OP2_GLOBAL
#define OP2_ENTRY extern \"C\" __global__ void
#define OP2_SHARED __shared__
#define OP2_SYNC __syncthreads()
#define OP2_GID ((long)blockIdx.x * blockDim.x + threadIdx.x)
#define OP2_LID ((long)threadIdx.x)
#define OP2_INC(p) atomicAdd(p, 1u)
typedef unsigned int uint;
";

/// The device language a source is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceLanguage {
    /// OpenCL C 1.2.
    OpenCl,
    /// CUDA C++ for NVRTC.
    Cuda,
}

/// The build's program for positions of type `position` with `dims` (2 or
/// 3) coordinates each:
///
/// ```c
/// op2_fill_zero(long n, uint *p)                      // p[0..n) = 0
/// op2_bin_count(long n, const int *flags, const T *pos, const double *grid,
///               uint *bins, uint *counts)             // bins[e], counts[bin]++ (flags may be null)
/// op2_bin_scan(long nbins, const uint *counts, int *starts, int *total)  // one block
/// op2_bin_scatter(long n, const uint *bins, const int *starts, uint *cursor, uint *order)
/// op2_bin_canonical(long nbins, const int *starts, uint *order, const long *ids)  // ids may be null
/// op2_gather_words(long n, long words, const uint *order, const uint *src, uint *dst)
/// ```
pub fn binning_source(language: DeviceLanguage, position: ScalarType, dims: usize) -> String {
    let words = match language {
        DeviceLanguage::OpenCl => OPENCL_WORDS,
        DeviceLanguage::Cuda => CUDA_WORDS,
    };
    let t = c_type(position);
    let z = if dims == 3 { "(double)pos[e * 3 + 2]" } else { "0.0" };
    format!(
        "/* op2: a spatial message build ({lang:?}, {dims}-D {t} positions) */
{words}#define OP2_NO_BIN 0xffffffffu
{SPATIAL_C}
OP2_ENTRY op2_fill_zero(long n, OP2_GLOBAL uint *p) {{
    long i = OP2_GID;
    if (i < n) p[i] = 0;
}}
OP2_ENTRY op2_bin_count(long n, OP2_GLOBAL const int *flags, OP2_GLOBAL const {t} *pos,
                        OP2_GLOBAL const double *grid, OP2_GLOBAL uint *bins, OP2_GLOBAL uint *counts) {{
    long e = OP2_GID;
    if (e >= n) return;
    if (flags && flags[e] == 0) {{ bins[e] = OP2_NO_BIN; return; }}
    double g[8];
    for (int i = 0; i < 8; ++i) g[i] = grid[i];
    int wrap = g[7] != 0.0;
    long bx = op2_axis_bin((double)pos[e * {dims}], g[0], g[3], g[4], wrap);
    long by = op2_axis_bin((double)pos[e * {dims} + 1], g[1], g[3], g[5], wrap);
    long bz = g[6] > 1.0 ? op2_axis_bin({z}, g[2], g[3], g[6], wrap) : 0;
    uint b = (uint)(bx + (long)g[4] * (by + (long)g[5] * bz));
    bins[e] = b;
    OP2_INC(&counts[b]);
}}
OP2_ENTRY op2_bin_scan(long nbins, OP2_GLOBAL const uint *counts, OP2_GLOBAL int *starts, OP2_GLOBAL int *total) {{
    OP2_SHARED uint part[{threads}];
    long t = OP2_LID, per = (nbins + {threads} - 1) / {threads};
    long lo = t * per, hi = lo + per < nbins ? lo + per : nbins;
    uint sum = 0;
    for (long b = lo; b < hi; ++b) sum += counts[b];
    part[t] = sum;
    OP2_SYNC;
    if (t == 0) {{
        uint run = 0;
        for (int i = 0; i < {threads}; ++i) {{ uint c = part[i]; part[i] = run; run += c; }}
        starts[nbins] = (int)run;
        total[0] = (int)run;
    }}
    OP2_SYNC;
    uint run = part[t];
    for (long b = lo; b < hi; ++b) {{ starts[b] = (int)run; run += counts[b]; }}
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
OP2_ENTRY op2_gather_words(long n, long words, OP2_GLOBAL const uint *order,
                           OP2_GLOBAL const uint *src, OP2_GLOBAL uint *dst) {{
    long g = OP2_GID;
    if (g >= n * words) return;
    long i = g / words, w = g - i * words;
    dst[g] = src[(long)order[i] * words + w];
}}
",
        lang = language,
        threads = SCAN_THREADS,
    )
}
