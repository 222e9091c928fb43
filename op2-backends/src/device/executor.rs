//! The executor every device backend shares, generic over its [`DeviceApi`]:
//! one compiled program per loop shape, the data on the device, plans,
//! reduction partials and their folds into the Globals (one program per
//! element type), checked mode, the increments choice (and its visible
//! fallback) and the code cache counters.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::binning::BinningPrograms;
use super::tuning::{describe, TrialCall, Tuner, Variant, TRIAL_BLOCK_SIZES};
use super::tuning_records::TuningRecords;
use super::work::{ReorderProgram, WorkScratch};
use op2_core::{
    Access, CodeCacheCounters, CodeCacheStats, ColumnShape, DeviceLayout, DeviceWork, Error, Executor, LoopBody,
    ParLoop, ReductionLayout, Result, ScalarType, ScopedThreads, Workers,
};

use super::api::{Built, DeviceApi, LaunchArgs, UtilityArg};
use super::{column_shapes, prepare_loop, CheckReport, LoopCaches, PartialsPool, PlanBuffersCache};
use crate::codegen::{fold_entry, reduction_source, Checks, LoopShape, FOLD_ENTRIES, FOLD_THREADS};
use crate::{Increments, IndirectWrites, RuntimeOptions};

/// A fresh id for a device context: buffers remember it, so a buffer of
/// another context (or another API) is never taken for one of this one.
pub fn next_context_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A compiled loop and the most threads a block of it may have.
struct Compiled<P> {
    program: P,
    max_block_size: usize,
}

/// Compiled programs by loop shape and treatment of indirect writes.
type Programs<P> = Mutex<HashMap<(LoopShape, IndirectWrites), Arc<Compiled<P>>>>;

/// A device backend: the shared loop machinery over one device API.
pub struct DeviceExecutor<A: DeviceApi> {
    api: A,
    block_size: usize,
    increments: Increments,
    checks: Checks,
    /// Whether each loop waits for the device before it returns.
    sync_loops: bool,
    /// The layout of Dats that leave it to the runtime.
    device_layout: DeviceLayout,
    programs: Programs<A::Program>,
    plans: PlanBuffersCache,
    partials: PartialsPool,
    /// The programs that fold reduction partials, by element type.
    folds: Mutex<HashMap<ScalarType, Arc<A::Utility>>>,
    counters: CodeCacheCounters,
    /// One line per loop that runs otherwise than the options asked.
    fallbacks: Mutex<Vec<(&'static str, String)>>,
    /// The trials of [`Increments::Auto`].
    tuner: Tuner,
    /// Their choices on disk, from run to run (`None`: no cache directory).
    records: Option<TuningRecords>,
    /// Whether the options gave the block size (else automatic trials try
    /// several).
    block_size_given: bool,
    /// The device a rank took by its node rank, for the summary.
    placement: Option<String>,
    /// Host threads for the host's part of builds and compactions.
    host_workers: ScopedThreads,
    /// The message-build programs, by position type and dims.
    pub(super) binning: BinningPrograms<A::Utility>,
    /// The reordering program (selections, gathers).
    pub(super) reorder: ReorderProgram<A::Utility>,
    /// Scratch buffers of device work.
    pub(super) work_scratch: Mutex<WorkScratch>,
}

impl<A: DeviceApi> DeviceExecutor<A> {
    /// The executor over `api`, with `options` (blocks of
    /// `default_block_size` threads when they do not say).
    pub fn with_api(api: A, options: &RuntimeOptions, default_block_size: usize) -> Result<Self> {
        let block_size = options.block_size.unwrap_or(default_block_size);
        let max = api.info().max_block_size;
        if block_size == 0 || block_size > max {
            return Err(Error::InvalidOption {
                option: "block_size",
                reason: format!(
                    "{block_size} elements per block: a {} of `{}` has 1 to {max} {}",
                    A::BLOCK,
                    api.device_name(),
                    A::THREADS
                ),
            });
        }
        tracing::info!(
            backend = A::BACKEND,
            device = api.device_name(),
            node_rank = options.node_rank,
            block_size,
            "device chosen"
        );
        // Under MPI, which device a rank took by its node rank.
        let placement = match (options.node_rank, &options.device) {
            (Some(r), None) => Some(format!(
                "device `{}` for node rank {r} (node rank modulo the node's devices)",
                api.device_name()
            )),
            _ => None,
        };
        Ok(DeviceExecutor {
            block_size,
            increments: options.resolved_increments()?,
            checks: options.resolved_checks()?,
            sync_loops: options.sync_loops.unwrap_or(false),
            device_layout: options.device_layout.unwrap_or_default(),
            api,
            programs: Mutex::new(HashMap::new()),
            plans: PlanBuffersCache::default(),
            partials: PartialsPool::default(),
            folds: Mutex::new(HashMap::new()),
            counters: CodeCacheCounters::default(),
            fallbacks: Mutex::new(Vec::new()),
            tuner: Tuner::default(),
            records: match options.resolved_increments()? {
                Increments::Auto => TuningRecords::open(options.cache_dir.as_deref()),
                _ => None,
            },
            block_size_given: options.block_size.is_some(),
            placement,
            host_workers: ScopedThreads::available(),
            binning: BinningPrograms::default(),
            reorder: ReorderProgram::default(),
            work_scratch: Mutex::new(WorkScratch::default()),
        })
    }

    /// The device API underneath.
    pub fn api(&self) -> &A {
        &self.api
    }

    /// The device's name.
    pub fn device_name(&self) -> &str {
        self.api.device_name()
    }

    /// How this loop's indirect writes are made safe: as the options ask,
    /// except that atomics on 64-bit values fall back to colouring where the
    /// device has none (noted once per loop, in the log and the summary).
    fn indirect_writes(&self, loop_name: &'static str, shape: &LoopShape) -> IndirectWrites {
        match self.increments {
            Increments::Atomics => self.atomics_or_fallback(loop_name, shape),
            other => IndirectWrites::of(shape, other),
        }
    }

    /// The atomic form of this loop where it has one and the device can
    /// run it; else its coloured form (a fallback noted once per loop, in
    /// the log and the summary, when the device lacks 64-bit atomics).
    fn atomics_or_fallback(&self, loop_name: &'static str, shape: &LoopShape) -> IndirectWrites {
        let asked = IndirectWrites::of(shape, Increments::Atomics);
        let Some(missing) = &self.api.info().missing_64_bit_atomics else {
            return asked;
        };
        if asked != IndirectWrites::Atomic || !IndirectWrites::needs_64_bit_atomics(shape) {
            return asked;
        }
        // Every call of a falling-back loop comes here: compare names, format once.
        let mut notes = self.fallbacks.lock().unwrap_or_else(|p| p.into_inner());
        if !notes.iter().any(|(name, _)| *name == loop_name) {
            let note = format!(
                "loop `{loop_name}`: increments by colouring instead of atomics: `{}` has {missing}",
                self.api.device_name()
            );
            tracing::warn!(backend = A::BACKEND, "{note}");
            notes.push((loop_name, note));
        }
        IndirectWrites::of(shape, Increments::Colouring)
    }

    /// The compiled program of a loop of this shape: built once per executor.
    fn program(&self, lp: &ParLoop<'_>, shape: LoopShape, writes: IndirectWrites) -> Result<Arc<Compiled<A::Program>>> {
        // Held while compiling: two threads never build the same program.
        let mut programs = self.programs.lock().unwrap_or_else(|p| p.into_inner());
        let key = (shape, writes);
        if let Some(p) = programs.get(&key) {
            self.counters.memory_hit();
            return Ok(p.clone());
        }
        let name = lp.kernel.name;
        let source = A::source(lp.kernel, &key.0, writes, self.checks);
        let start = std::time::Instant::now();
        let (program, built) = self.api.build(name, &source)?;
        let max_block_size = self.api.program_max_block_size(&program)?;
        tracing::debug!(
            backend = A::BACKEND,
            loop_name = name,
            ?writes,
            ?built,
            seconds = start.elapsed().as_secs_f64(),
            "device program ready"
        );
        match built {
            Built::Compiled => self.counters.compiled(),
            Built::FromDisk => self.counters.disk_hit(),
            Built::Rebuilt => {
                self.counters.rebuilt();
                self.counters.compiled();
            }
        }
        let program = Arc::new(Compiled {
            program,
            max_block_size,
        });
        programs.insert(key, program.clone());
        Ok(program)
    }

    /// `program` at `block_size` threads a block, or an error naming the
    /// loop when its kernel cannot have that many.
    fn check_block_size(&self, name: &str, program: &Compiled<A::Program>, block_size: usize) -> Result<()> {
        if block_size <= program.max_block_size {
            return Ok(());
        }
        Err(Error::InvalidOption {
            option: "block_size",
            reason: format!(
                "loop `{name}` can have at most {} {} per {} on `{}` (its kernel needs many registers); \
                 {block_size} elements per block were asked for",
                program.max_block_size,
                A::THREADS,
                A::BLOCK,
                self.api.device_name()
            ),
        })
    }

    fn launch_all(
        &self,
        lp: &ParLoop<'_>,
        program: &A::Program,
        layout: &ReductionLayout,
        columns: &[Option<ColumnShape>],
        how: Variant,
    ) -> Result<()> {
        let Variant { writes, block_size } = how;
        let name = lp.kernel.name;
        // The folds' programs first (one lookup per reduction): a failed
        // build leaves nothing launched.
        let folds = lp
            .args
            .iter()
            .enumerate()
            .filter(|&(k, _)| layout.slot_offset(k).is_some())
            .map(|(_, a)| Ok((a.data.scalar(), self.fold_program(a.data.scalar())?)))
            .collect::<Result<Vec<_>>>()?;
        let p = prepare_loop(
            &self.api,
            lp,
            layout,
            columns,
            writes,
            block_size,
            LoopCaches {
                plans: &self.plans,
                partials: &self.partials,
            },
        )?;
        let report = CheckReport::new(&self.api, self.checks)?;
        let limit = self.api.info().max_blocks_per_launch;
        if let Some(l) = p.launches.iter().find(|l| l.count > limit) {
            return Err(Error::InvalidOption {
                option: "block_size",
                reason: format!(
                    "loop `{name}` would need {} blocks of {} elements in one launch, \
                     more than the {limit} one {} launch can have",
                    l.count,
                    block_size,
                    A::BACKEND
                ),
            });
        }
        let mut args = LaunchArgs {
            blocks: 0,
            block_size,
            units: p.units,
            unit_offset: 0,
            start: lp.range.start,
            end: lp.range.end,
            colours: p.colours,
            ncolours: p.ncolours,
            partials: p.partials.mem(&self.api),
            partial_offset: 0,
            report: report.mem(&self.api),
            elems: p.elems,
            reduces: layout.words_per_chunk() > 0,
            data: &p.args.data,
            strides: &p.args.strides,
            maps: &p.args.maps,
        };
        for l in p.launches.iter().filter(|l| l.count > 0) {
            args.blocks = l.count;
            args.unit_offset = l.offset;
            args.partial_offset = l.offset;
            if let Err(e) = self.api.launch(program, name, &args) {
                // Earlier colours may still run: let them finish before the error returns.
                let _ = self.api.finish(name);
                return Err(e);
            }
        }
        // A failed check leaves the Globals as they were: look before folding.
        let checked = self.checks == Checks::On;
        if checked {
            self.api.finish(name)?;
            report.result(name, A::BACKEND)?;
        }
        let threads = self.fold_threads();
        let mut fold = |t: ScalarType, access: Access, fold_args: &[UtilityArg<A::Mem>]| {
            let (_, program) = folds
                .iter()
                .find(|(of, _)| *of == t)
                .expect("a program per reduction's type, built above");
            self.api
                .launch_utility(program, fold_entry(access), 1, threads, fold_args)
        };
        let folded = p.partials.fold(&self.api, layout, lp.args, &p.args.data, &mut fold)?;
        // Otherwise the loop returns with its work queued (and submitted):
        // the queue runs in order, and the host waits where it next reads
        // device data.
        if self.sync_loops && (folded || !checked) {
            self.api.finish(name)?;
        } else {
            self.api.flush(name)?;
        }
        Ok(())
    }

    /// A loop under [`Increments::Auto`]: run as the loop's trial says
    /// (`tuning.rs`: coloured or atomic increments where it has both, and
    /// blocks of several sizes where the options give none), timed while
    /// the trial runs (the host waiting for the device before and after),
    /// then as it chose.
    fn execute_measured(
        &self,
        lp: &ParLoop<'_>,
        shape: LoopShape,
        layout: &ReductionLayout,
        columns: &[Option<ColumnShape>],
    ) -> Result<()> {
        let name = lp.kernel.name;
        // Once chosen, a loop runs as any other: no variants, no timing.
        if let Some(how) = self.tuner.chosen(&shape) {
            let program = self.program(lp, shape, how.writes)?;
            return self.launch_all(lp, &program.program, layout, columns, how);
        }
        let mut forms = vec![IndirectWrites::of(&shape, Increments::Colouring)];
        let atomic = self.atomics_or_fallback(name, &shape);
        if atomic != forms[0] {
            forms.push(atomic);
        }
        let mut variants = Vec::new();
        for writes in forms {
            let program = self.program(lp, shape.clone(), writes)?;
            let sizes: Vec<usize> = match self.block_size_given {
                true => vec![self.block_size],
                false => TRIAL_BLOCK_SIZES
                    .into_iter()
                    .filter(|&b| b <= program.max_block_size && b <= self.api.info().max_block_size)
                    .collect(),
            };
            variants.extend(sizes.into_iter().map(|block_size| Variant { writes, block_size }));
        }
        if variants.is_empty() {
            // A kernel too big for any trial size: the executor's own.
            variants.push(Variant {
                writes: IndirectWrites::of(&shape, Increments::Colouring),
                block_size: self.block_size,
            });
        }
        if let [only] = variants[..] {
            // Nothing to try: fixed for the later calls.
            self.tuner.settle(&shape, only);
        }
        // The disk is read at a trial's first call and written at its last.
        let records = self.records.as_ref().filter(|_| variants.len() > 1);
        let record_path = |r: &TuningRecords, shape: &LoopShape| {
            let size = lp.set.size();
            r.path(
                A::BACKEND,
                self.api.device_name(),
                lp.kernel.c_source,
                shape,
                size,
                &variants,
            )
        };
        if let Some(records) = records.filter(|_| !self.tuner.started(&shape)) {
            let at = record_path(records, &shape);
            if let Some(v) = records.load(&at, &variants) {
                // Measured in an earlier run on this device: no trial.
                self.tuner.settle(&shape, v);
                let note = format!(
                    "loop `{name}`: {}, as an earlier run measured ({})",
                    describe(v),
                    at.display()
                );
                self.fallbacks
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push((name, note));
                let program = self.program(lp, shape, v.writes)?;
                return self.launch_all(lp, &program.program, layout, columns, v);
            }
        }
        let call = match variants.len() {
            1 => TrialCall {
                variant: variants[0],
                timed: false,
            },
            _ => self.tuner.next(&shape, &variants),
        };
        let Variant { writes, block_size } = call.variant;
        let program = self.program(lp, shape.clone(), writes)?;
        self.check_block_size(name, &program, block_size)?;
        let start = if call.timed {
            self.api.finish(name)?;
            Some(std::time::Instant::now())
        } else {
            None
        };
        self.launch_all(lp, &program.program, layout, columns, call.variant)?;
        let seconds = match start {
            Some(t) => {
                self.api.finish(name)?;
                Some(t.elapsed().as_secs_f64())
            }
            None => None,
        };
        if variants.len() > 1 {
            if let Some(note) = self.tuner.record(name, &shape, &variants, call.variant, seconds) {
                tracing::info!(backend = A::BACKEND, "{note}");
                if let (Some(records), Some(chosen)) = (records, self.tuner.chosen(&shape)) {
                    records.store(&record_path(records, &shape), chosen);
                }
                let mut notes = self.fallbacks.lock().unwrap_or_else(|p| p.into_inner());
                notes.push((name, note));
            }
        }
        Ok(())
    }

    /// Threads of the block that folds partials: [`FOLD_THREADS`], or the
    /// device's largest block if smaller.
    fn fold_threads(&self) -> usize {
        FOLD_THREADS.min(self.api.info().max_block_size)
    }

    /// The program that folds partials of type `t`, built on first use.
    fn fold_program(&self, t: ScalarType) -> Result<Arc<A::Utility>> {
        let mut folds = self.folds.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = folds.get(&t) {
            return Ok(p.clone());
        }
        let source = reduction_source(A::LANGUAGE, t, self.fold_threads());
        let name = format!("fold {}", t.rust_name());
        let p = Arc::new(self.api.build_utility(&name, &source, &FOLD_ENTRIES)?);
        folds.insert(t, p.clone());
        Ok(p)
    }
}

impl<A: DeviceApi> Drop for DeviceExecutor<A> {
    fn drop(&mut self) {
        // Loops return once launched: let their work finish before the
        // programs and buffers go (an error no one will read is dropped).
        let _ = self.api.finish("dropping the runtime");
    }
}

impl<A: DeviceApi> Executor for DeviceExecutor<A> {
    fn name(&self) -> &'static str {
        A::BACKEND
    }

    fn is_device(&self) -> bool {
        true
    }

    fn is_deterministic(&self) -> bool {
        // Atomic additions land in a different order on every run (and a
        // measured choice may pick them).
        self.increments == Increments::Colouring
    }

    unsafe fn execute(&self, lp: &ParLoop<'_>, _native_body: &LoopBody<'_>) -> Result<()> {
        if lp.range.is_empty() {
            return Ok(());
        }
        let layout = ReductionLayout::new(lp.args);
        let columns = column_shapes(lp, self.device_layout, self.api.info().prefers_columns);
        let mut shape = LoopShape::of(lp, &layout);
        for (a, c) in shape.args.iter_mut().zip(&columns) {
            a.columns = c.is_some();
        }
        if self.increments == Increments::Auto {
            return self.execute_measured(lp, shape, &layout, &columns);
        }
        let writes = self.indirect_writes(lp.kernel.name, &shape);
        let program = self.program(lp, shape, writes)?;
        self.check_block_size(lp.kernel.name, &program, self.block_size)?;
        let how = Variant {
            writes,
            block_size: self.block_size,
        };
        self.launch_all(lp, &program.program, &layout, &columns, how)
    }

    fn code_cache_stats(&self) -> CodeCacheStats {
        self.counters.stats()
    }

    fn workers(&self) -> &dyn Workers {
        &self.host_workers
    }

    fn device_work(&self) -> Option<&dyn DeviceWork> {
        // A device whose blocks cannot hold the scans' threads leaves the
        // work to the host.
        self.check_scan_threads().is_ok().then_some(self as &dyn DeviceWork)
    }

    fn fallbacks(&self) -> Vec<String> {
        let notes = self.fallbacks.lock().unwrap_or_else(|p| p.into_inner());
        self.placement
            .iter()
            .cloned()
            .chain(notes.iter().map(|(_, note)| note.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use op2_core::{Access, ScalarType};

    use super::*;
    use crate::codegen::{ArgKind, ArgShape};
    use crate::device::{DeviceInfo, UtilityArg};

    /// A device without 64-bit atomics; it never builds or launches.
    struct NoAtomics(DeviceInfo);

    fn no_atomics() -> NoAtomics {
        NoAtomics(DeviceInfo {
            name: "no-atomics".to_string(),
            context_id: 0,
            max_block_size: 64,
            max_blocks_per_launch: 1,
            missing_64_bit_atomics: Some("no 64-bit atomics".to_string()),
            prefers_columns: true,
        })
    }

    impl DeviceApi for NoAtomics {
        const BACKEND: &'static str = "test";
        const BLOCK: &'static str = "block";
        const THREADS: &'static str = "threads";
        const LANGUAGE: crate::codegen::DeviceLanguage = crate::codegen::DeviceLanguage::OpenCl;
        type Mem = usize;
        type Program = ();
        type Utility = ();

        fn info(&self) -> &DeviceInfo {
            &self.0
        }
        fn source(_: &op2_core::KernelInfo, _: &LoopShape, _: IndirectWrites, _: Checks) -> String {
            unreachable!("not built in these tests")
        }
        fn build(&self, _: &str, _: &str) -> Result<((), Built)> {
            unreachable!("not built in these tests")
        }
        fn program_max_block_size(&self, _: &()) -> Result<usize> {
            unreachable!("not built in these tests")
        }
        fn new_buffer(&self, _: &str, _: usize) -> Result<Box<dyn op2_core::DeviceBuffer>> {
            unreachable!("no buffers in these tests")
        }
        fn mem_of(&self, _: &dyn op2_core::DeviceBuffer) -> usize {
            0
        }
        fn null_mem(&self) -> usize {
            0
        }
        fn launch(&self, _: &(), _: &str, _: &LaunchArgs<'_, usize>) -> Result<()> {
            unreachable!("no launches in these tests")
        }
        fn build_utility(&self, _: &str, _: &str, _: &[&str]) -> Result<()> {
            unreachable!("not built in these tests")
        }
        fn launch_utility(&self, _: &(), _: usize, _: usize, _: usize, _: &[UtilityArg<usize>]) -> Result<()> {
            unreachable!("no launches in these tests")
        }
        fn finish(&self, _: &str) -> Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_device_with_blocks_too_small_for_the_build_scan_is_an_error() {
        let exec = DeviceExecutor::with_api(no_atomics(), &RuntimeOptions::default(), 32).unwrap();
        let b = crate::device::BinBuffers {
            n: 4,
            nbins: 2,
            flags: 0,
            positions: 0,
            grid: 0,
            ids: 0,
            bins: 0,
            counts: 0,
            cursor: 0,
            starts: 0,
            total: 0,
            order: 0,
        };
        assert!(
            Executor::device_work(&exec).is_none(),
            "builds and compactions stay on the host's threads"
        );
        let e = exec.enqueue_binning(ScalarType::F64, 2, &b).unwrap_err();
        assert!(matches!(e, Error::InvalidOption { option: "device", .. }), "{e:?}");
        let msg = e.to_string();
        assert!(
            msg.contains("no-atomics") && msg.contains("64") && msg.contains("256"),
            "{msg}"
        );
    }

    fn increment_of(scalar: ScalarType) -> LoopShape {
        LoopShape {
            kernel: "k",
            source_id: 0,
            args: vec![ArgShape {
                kind: ArgKind::MapEntry { arity: 2, index: 0 },
                access: Access::Inc,
                scalar,
                dim: 1,
                columns: false,
                long_map: false,
            }],
            partial_words: 0,
            subset: false,
        }
    }

    #[test]
    fn atomics_without_64_bit_support_fall_back_to_colouring_visibly() {
        let options = RuntimeOptions::default().increments(Increments::Atomics);
        let exec = DeviceExecutor::with_api(no_atomics(), &options, 32).unwrap();
        assert!(!exec.is_deterministic(), "atomics were asked for");
        // 32-bit increments keep their atomics and note nothing.
        assert_eq!(
            exec.indirect_writes("narrow", &increment_of(ScalarType::F32)),
            IndirectWrites::Atomic
        );
        assert!(exec.fallbacks().is_empty());
        // 64-bit ones are coloured, noted once per loop.
        for _ in 0..2 {
            assert_eq!(
                exec.indirect_writes("wide", &increment_of(ScalarType::F64)),
                IndirectWrites::Coloured { whole_body: false }
            );
        }
        let notes = exec.fallbacks();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains("loop `wide`") && notes[0].contains("colouring") && notes[0].contains("no-atomics"),
            "{}",
            notes[0]
        );
    }

    #[test]
    fn a_block_size_beyond_a_kernels_own_limit_is_refused_naming_the_loop() {
        let exec = DeviceExecutor::with_api(no_atomics(), &RuntimeOptions::default(), 32).unwrap();
        let heavy = Compiled {
            program: (),
            max_block_size: 48,
        };
        assert!(exec.check_block_size("light", &heavy, 48).is_ok());
        let e = exec.check_block_size("res_calc", &heavy, 64).unwrap_err();
        assert!(
            matches!(
                e,
                Error::InvalidOption {
                    option: "block_size",
                    ..
                }
            ),
            "{e:?}"
        );
        let msg = e.to_string();
        assert!(
            msg.contains("loop `res_calc`") && msg.contains("at most 48 threads per block") && msg.contains("64"),
            "{msg}"
        );
    }

    #[test]
    fn block_sizes_beyond_the_device_are_refused_naming_its_limit() {
        let e = DeviceExecutor::with_api(no_atomics(), &RuntimeOptions::default().block_size(65), 32)
            .err()
            .expect("65 > 64");
        assert!(e.to_string().contains("1 to 64 threads"), "{e}");
        let exec = DeviceExecutor::with_api(no_atomics(), &RuntimeOptions::default(), 32).unwrap();
        assert!(exec.is_deterministic(), "colouring is the default");
    }
}
