//! What every utility program (the device work around loops: message
//! builds, compactions) starts with, in either device dialect: the
//! spellings that differ between OpenCL and CUDA, a fill with zeros and a
//! one-block prefix sum. Every entry point takes only `long`s and global
//! pointers (8 bytes each on both APIs).

/// The threads of the one block that runs `op2_scan`, and of every block
/// of the selection entry points (which scan inside their block).
pub const SCAN_THREADS: usize = 256;

/// The device language a source is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceLanguage {
    /// OpenCL C 1.2.
    OpenCl,
    /// CUDA C++ for NVRTC.
    Cuda,
}

/// The spellings that differ between the dialects.
const OPENCL_WORDS: &str = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define OP2_FN inline
#define OP2_GLOBAL __global
#define OP2_ENTRY __kernel void
#define OP2_SHARED __local
#define OP2_SYNC barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)
#define OP2_GID ((long)get_global_id(0))
#define OP2_LID ((long)get_local_id(0))
#define OP2_BLOCK ((long)get_group_id(0))
#define OP2_INC(p) atomic_inc(p)
";

const CUDA_WORDS: &str = "#define OP2_FN static __device__ inline
#define OP2_GLOBAL
#define OP2_ENTRY extern \"C\" __global__ void
#define OP2_SHARED __shared__
#define OP2_SYNC __syncthreads()
#define OP2_GID ((long)blockIdx.x * blockDim.x + threadIdx.x)
#define OP2_LID ((long)threadIdx.x)
#define OP2_BLOCK ((long)blockIdx.x)
#define OP2_INC(p) atomicAdd(p, 1u)
typedef unsigned int uint;
";

/// The start of a utility program in `language`:
///
/// ```c
/// op2_fill_zero(long n, uint *p)                                   // p[0..n) = 0
/// op2_scan(long n, const uint *counts, int *starts, int *total)   // one block: exclusive sum, starts[n] = total
/// ```
pub fn utility_prelude(language: DeviceLanguage) -> String {
    let words = match language {
        DeviceLanguage::OpenCl => OPENCL_WORDS,
        DeviceLanguage::Cuda => CUDA_WORDS,
    };
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
