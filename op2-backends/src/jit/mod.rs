//! The host C JIT backend (docs/ARCHITECTURE.md, Backends): at a loop's first call,
//! generate a C wrapper for its shape around the translated kernel, compile it
//! with the system C compiler, load it, and run it over the loop's schedule
//! (`ParLoop::schedule`), a phase per call, with OpenMP. Compiled loops are
//! cached in memory (keyed by the loop's shape: no hashing or file access on a
//! repeated loop) and on disk (keyed by a hash of the source, the compiler's
//! identity and flags, and op2's version).

mod compiler;

use std::collections::HashMap;
use std::ffi::{c_int, c_long, c_void};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

pub use crate::code_cache::default_dir as default_cache_dir;
use crate::code_cache::{cache_key, DiskCache};
pub use crate::config::{DEFAULT_CC, DEFAULT_CFLAGS};
pub use compiler::Compiler;
use op2_core::{
    ArgRoute, CodeCacheCounters, CodeCacheStats, Error, Executor, HostSchedule, LoopBody, ParLoop, ReductionLayout,
    Result, ScopedThreads, Workers,
};

use crate::codegen::{check_failure, host_source, Checks, LoopShape};
use crate::RuntimeOptions;

/// Elements per block when the options do not say (as for `rayon`).
pub const DEFAULT_BLOCK_SIZE: usize = 4096;

type LoopFn = unsafe extern "C" fn(
    runs: *const c_long,
    unit_runs: *const c_long,
    nunits: c_long,
    data: *const *mut c_void,
    maps: *const *const c_int,
    partials: *mut u64,
    nthreads: c_int,
    report: *mut c_long,
    elems: *const c_int,
);

struct Compiled {
    func: LoopFn,
    // Loaded with RTLD_NODELETE: never unloaded while OpenMP threads live.
    _library: libloading::os::unix::Library,
}

/// The `jit` backend.
pub struct JitExecutor {
    compiler: Compiler,
    cache: DiskCache,
    nthreads: c_int,
    /// Host threads for builds and compactions: as many as the loops use.
    workers: ScopedThreads,
    block_size: usize,
    schedule: HostSchedule,
    checks: Checks,
    loaded: Mutex<HashMap<LoopShape, Arc<Compiled>>>,
    counters: CodeCacheCounters,
}

impl JitExecutor {
    /// An executor using `options.cc` (else [`DEFAULT_CC`]), `options.cflags`
    /// (else [`DEFAULT_CFLAGS`]) and `options.cache_dir` (else the default
    /// cache directory); a [`Runtime`](crate::Runtime) has resolved them from
    /// `OP2_CC`, `OP2_CFLAGS` and `OP2_CACHE_DIR` ([`RuntimeOptions::resolve`]).
    /// Fails if the thread count is refused
    /// ([`RuntimeOptions::checked_threads`]), the compiler cannot be run or
    /// the cache directory cannot be created.
    pub fn new(options: &RuntimeOptions) -> Result<JitExecutor> {
        let cc = options.cc.as_deref().unwrap_or(DEFAULT_CC);
        let flags = options.cflags.as_deref().unwrap_or(DEFAULT_CFLAGS);
        let nthreads = match options.checked_threads()? {
            // At most `RuntimeOptions::max_threads()`: far below `c_int::MAX`.
            Some(n) => c_int::try_from(n).unwrap_or(c_int::MAX),
            None => 0, // OpenMP's default (OMP_NUM_THREADS, else all cores)
        };
        let dir = options.cache_dir.clone().unwrap_or_else(default_cache_dir);
        let compiler = Compiler::detect(cc, flags)?;
        let cache = DiskCache::new(dir)?;
        Ok(JitExecutor {
            compiler,
            cache,
            nthreads,
            workers: match nthreads {
                0 => ScopedThreads::available(),
                n => ScopedThreads::new(n as usize),
            },
            block_size: options.block_size.unwrap_or(DEFAULT_BLOCK_SIZE),
            schedule: options.host_schedule.unwrap_or_default(),
            checks: options.resolved_checks()?,
            loaded: Mutex::new(HashMap::new()),
            counters: CodeCacheCounters::default(),
        })
    }

    /// The disk cache directory.
    pub fn cache_dir(&self) -> PathBuf {
        self.cache.dir().to_path_buf()
    }

    fn compiled(&self, lp: &ParLoop<'_>, shape: LoopShape) -> Result<Arc<Compiled>> {
        let mut loaded = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = loaded.get(&shape) {
            self.counters.memory_hit();
            return Ok(c.clone());
        }
        let source = host_source(lp.kernel, &shape, self.checks);
        let key = cache_key(&[
            source.as_bytes(),
            self.compiler.key_material().as_bytes(),
            env!("CARGO_PKG_VERSION").as_bytes(),
        ]);
        let (object, source_path) = self.cache.paths(&format!("op2_{}_{key:016x}", lp.kernel.name));
        match DiskCache::is_valid(&object) {
            Some(true) => {
                self.counters.disk_hit();
                tracing::debug!(loop_name = lp.kernel.name, object = %object.display(), "jit: cached loop found on disk");
            }
            found => {
                if found == Some(false) {
                    self.counters.rebuilt();
                    tracing::debug!(loop_name = lp.kernel.name, object = %object.display(), "jit: cached loop corrupt, rebuilding");
                }
                let start = std::time::Instant::now();
                DiskCache::write_atomically(&source_path, source.as_bytes())
                    .map_err(|e| self.cache.error(&source_path, "cannot write the loop's C source", e))?;
                let built = DiskCache::temp_for(&object);
                if let Err(log) = self.compiler.compile(&source_path, &built) {
                    let _ = std::fs::remove_file(&built);
                    return Err(Error::JitCompile {
                        loop_name: lp.kernel.name.to_string(),
                        source_path,
                        log,
                    });
                }
                DiskCache::publish(&built, &object)
                    .map_err(|e| self.cache.error(&object, "cannot store the compiled loop", e))?;
                self.counters.compiled();
                tracing::info!(
                    loop_name = lp.kernel.name,
                    source = %source_path.display(),
                    seconds = start.elapsed().as_secs_f64(),
                    "jit: loop compiled"
                );
            }
        }
        let flags = libc::RTLD_NOW | libc::RTLD_LOCAL | libc::RTLD_NODELETE;
        let load_err = |reason: String| Error::JitLoad {
            loop_name: lp.kernel.name.to_string(),
            path: object.clone(),
            reason,
        };
        // SAFETY: the object is one op2 generated and compiled (checked by its
        // trailer); its initialisers are the C runtime's.
        let library = unsafe { libloading::os::unix::Library::open(Some(&object), flags) }
            .map_err(|e| load_err(e.to_string()))?;
        // SAFETY: `op2_loop` has the signature `host_source` generates.
        let func: LoopFn = unsafe { library.get::<LoopFn>(b"op2_loop\0") }
            .map(|s| *s)
            .map_err(|e| load_err(e.to_string()))?;
        let compiled = Arc::new(Compiled {
            func,
            _library: library,
        });
        loaded.insert(shape, compiled.clone());
        Ok(compiled)
    }
}

impl Executor for JitExecutor {
    fn name(&self) -> &'static str {
        "jit"
    }

    fn workers(&self) -> &dyn Workers {
        &self.workers
    }

    unsafe fn execute(&self, lp: &ParLoop<'_>, _native_body: &LoopBody<'_>) -> Result<()> {
        let layout = ReductionLayout::new(lp.args);
        let compiled = self.compiled(lp, LoopShape::of(lp, &layout))?;
        let data: Vec<*mut c_void> = lp.args.iter().map(|a| a.data.host_bytes() as *mut c_void).collect();
        // Map tables (or ragged offsets), then ragged targets: see `host_source`.
        let maps: Vec<*const c_int> = (lp.args.iter().map(|a| match a.route {
            // 32-bit or 64-bit entries: the generated code reads them as such.
            ArgRoute::Map(m) => m.map.table().as_bytes().as_ptr().cast::<c_int>(),
            ArgRoute::Ragged(r) => r.offsets().as_ptr(),
            // A Dat read whole: its count.
            ArgRoute::Whole(w) => w.count.as_ptr(),
            ArgRoute::Direct => std::ptr::null(),
        }))
        .chain(lp.args.iter().map(|a| match a.route {
            ArgRoute::Ragged(r) => r.targets().as_ptr(),
            _ => std::ptr::null(),
        }))
        .collect();
        let words = layout.words_per_chunk();
        // Checked mode: code, element, index, length of the lowest failure.
        let mut report: [c_long; 4] = [0; 4];
        let report_ptr = report.as_mut_ptr();
        // A subset's elements, position by position (the range indexes them).
        let elems = lp.elements().map_or(std::ptr::null(), <[i32]>::as_ptr);
        let schedule = lp.schedule(self.block_size, self.schedule);
        // Positions and offsets fit a C long (sets are at most i64::MAX
        // elements), and a usize is a C long.
        const _: () = assert!(std::mem::size_of::<usize>() == std::mem::size_of::<c_long>());
        let runs = schedule.runs().as_ptr().cast::<c_long>();
        let mut partials = layout.new_partials(lp.args, schedule.nunits());
        for f in 0..schedule.nphases() {
            let units = schedule.phase(f);
            // SAFETY: the runtime validated the loop (dims, maps, sets) and
            // holds its borrows; the generated code runs the positions of the
            // phase's units, all inside `lp.range` (which a subset's elements
            // cover), touches partials `units.len() * words` from the phase's
            // first unit's, and the schedule keeps one phase's units free of
            // write conflicts.
            unsafe {
                (compiled.func)(
                    runs,
                    schedule.unit_offsets()[units.start..].as_ptr().cast::<c_long>(),
                    units.len() as c_long,
                    data.as_ptr(),
                    maps.as_ptr(),
                    partials[units.start * words..].as_mut_ptr(),
                    self.nthreads,
                    report_ptr,
                    elems,
                )
            }
        }
        if report[0] != 0 {
            return Err(Error::KernelCheck {
                loop_name: lp.kernel.name.to_string(),
                backend: "jit",
                element: report[1] as usize,
                check: check_failure(report[0], Some((report[2], report[3]))),
            });
        }
        layout.combine_all(lp.args, &partials);
        Ok(())
    }

    fn code_cache_stats(&self) -> CodeCacheStats {
        self.counters.stats()
    }
}
