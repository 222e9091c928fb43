//! The choices of [`Increments::Auto`](crate::Increments::Auto) trials kept
//! on disk (in the code cache's `tuning` directory), so that a later run on
//! the same device takes a loop's measured variant at its first call
//! instead of trying them all again, as OP2 and Kokkos users expect of a
//! tuned parameter. A record is found only for the same device, kernel
//! source, argument shapes, set size and list of variants; a missing,
//! damaged or unreadable record means a trial, never an error.

use std::path::PathBuf;

use super::tuning::{describe, Variant};
use crate::code_cache::{cache_key, default_dir, DiskCache};
use crate::codegen::LoopShape;

/// The records of one executor's device.
pub struct TuningRecords {
    cache: DiskCache,
}

/// Where one loop's record lives.
pub struct RecordPath(PathBuf);

impl RecordPath {
    /// The file, for the note that names it.
    pub fn display(&self) -> std::path::Display<'_> {
        self.0.display()
    }
}

impl TuningRecords {
    /// Records in `dir` (else the default cache directory) under `tuning`;
    /// `None` if the directory cannot be made (trials then run every time).
    pub fn open(dir: Option<&std::path::Path>) -> Option<TuningRecords> {
        let dir = dir
            .map_or_else(default_dir, std::path::Path::to_path_buf)
            .join("tuning");
        DiskCache::new(dir).ok().map(|cache| TuningRecords { cache })
    }

    /// The record of a loop: `backend` on `device`, the kernel's C source,
    /// its shape, the iteration set's size and the variants tried.
    pub fn path(
        &self,
        backend: &str,
        device: &str,
        c_source: &str,
        shape: &LoopShape,
        set_size: usize,
        variants: &[Variant],
    ) -> RecordPath {
        // The shape's source address changes from run to run: the source
        // text stands for it.
        let args = format!("{:?} {} {}", shape.args, shape.partial_words, shape.subset);
        let tried = format!("{variants:?}");
        let key = cache_key(&[
            env!("CARGO_PKG_VERSION").as_bytes(),
            backend.as_bytes(),
            device.as_bytes(),
            shape.kernel.as_bytes(),
            c_source.as_bytes(),
            args.as_bytes(),
            &(set_size as u64).to_le_bytes(),
            tried.as_bytes(),
        ]);
        RecordPath(self.cache.dir().join(format!("{}-{key}.txt", shape.kernel)))
    }

    /// The variant recorded at `at`, if it is one of `variants`.
    pub fn load(&self, at: &RecordPath, variants: &[Variant]) -> Option<Variant> {
        let body = DiskCache::read_sealed(&at.0)?;
        let text = std::str::from_utf8(&body).ok()?;
        variants.iter().copied().find(|&v| describe(v) == text)
    }

    /// Records `chosen` at `at`; a failure to write only costs a trial in
    /// the next run.
    pub fn store(&self, at: &RecordPath, chosen: Variant) {
        if let Err(e) = DiskCache::write_sealed(&at.0, describe(chosen).as_bytes()) {
            tracing::warn!("could not record a trial's choice in {}: {e}", at.0.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::IndirectWrites;

    #[test]
    fn a_record_is_found_only_for_the_same_loop_size_and_variants() {
        let dir = std::env::temp_dir().join(format!("op2-tuning-records-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let records = TuningRecords::open(Some(&dir)).expect("a temporary directory");
        let shape = LoopShape {
            kernel: "k",
            source_id: 1,
            args: Vec::new(),
            partial_words: 0,
            subset: false,
        };
        let v = |writes, block_size| Variant { writes, block_size };
        let variants = [
            v(IndirectWrites::Coloured { whole_body: false }, 128),
            v(IndirectWrites::Atomic, 128),
            v(IndirectWrites::Atomic, 256),
        ];
        let at = records.path("opencl", "dev", "void k() {}", &shape, 100, &variants);
        assert_eq!(records.load(&at, &variants), None, "nothing recorded yet");
        records.store(&at, variants[2]);
        assert_eq!(records.load(&at, &variants), Some(variants[2]));
        // The source's address is not part of the key; its text, the set
        // size, the device and the variants are.
        let moved = LoopShape {
            source_id: 2,
            ..shape.clone()
        };
        let same = records.path("opencl", "dev", "void k() {}", &moved, 100, &variants);
        assert_eq!(records.load(&same, &variants), Some(variants[2]));
        for other in [
            records.path("opencl", "dev", "void k() {}", &shape, 101, &variants),
            records.path("opencl", "other", "void k() {}", &shape, 100, &variants),
            records.path("opencl", "dev", "void k() { }", &shape, 100, &variants),
            records.path("opencl", "dev", "void k() {}", &shape, 100, &variants[..2]),
        ] {
            assert_eq!(records.load(&other, &variants), None);
        }
        // A damaged record is a trial, not an error.
        std::fs::write(&at.0, b"atomics, 256 threads a block").unwrap();
        assert_eq!(records.load(&at, &variants), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
