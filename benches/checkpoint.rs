//! Checkpoints against the disk (feature `hdf5`): Circles' agents
//! (`CHECKPOINT_BENCH_AGENTS`, default 1 000 000) written by
//! `Checkpoints::checkpoint` and read back by `Checkpoints::resume`,
//! against writing and reading the same number of bytes as one plain file,
//! in the same run and folder (`CHECKPOINT_BENCH_DIR`, default the
//! system's temporary folder). Writes end with an fsync on both sides, so
//! both are timed to the disk; reads come from the page cache on both
//! sides. Three rounds, interleaved; prints MB/s, and the checkpoint's
//! write and resume rates as ratios to the plain write (the disk's
//! sequential write bandwidth: the bar is at least 0.5 for both); the
//! plain read, from the page cache, is shown beside them.
//!
//! `cargo bench --features hdf5 --bench checkpoint`

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use op2::{Backend, Runtime};

mod support;

/// `path`'s bytes to the disk.
fn sync(path: &Path) {
    std::fs::File::open(path).and_then(|f| f.sync_all()).expect("fsync");
}

/// Seconds to write `bytes` bytes as one plain file and fsync it.
fn plain_write(path: &Path, bytes: usize) -> f64 {
    let block = vec![0x5au8; 1 << 20];
    let t = Instant::now();
    let mut f = std::fs::File::create(path).expect("a plain file");
    let mut left = bytes;
    while left > 0 {
        let n = left.min(block.len());
        f.write_all(&block[..n]).expect("write");
        left -= n;
    }
    f.sync_all().expect("fsync");
    t.elapsed().as_secs_f64()
}

fn main() {
    use op2::model::Checkpoints;
    use op2_circles::{box_side, circles, initial_positions, Params};
    let n = support::number_from_env("CHECKPOINT_BENCH_AGENTS", 1_000_000) as usize;
    let dir: PathBuf = std::env::var_os("CHECKPOINT_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir)
        .join(format!("op2-checkpoint-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("the bench folder");
    let rt = Runtime::new(Backend::Seq).expect("seq");
    let side = box_side(n, 1.0);
    let start = initial_positions(n, side, 3);
    let ids: Vec<u64> = (0..n as u64).collect();
    let sim = circles(&rt, &ids, &start, side, Params::default()).expect("circles");
    let (ck, plain) = (dir.join("circles.h5"), dir.join("plain.bin"));
    println!(
        "checkpoint: {n} circles (ids, ids again as the model's u32, positions), {}",
        dir.display()
    );
    println!(
        "| round | checkpoint write MB/s | plain write MB/s | write / plain write | resume MB/s | resume / plain write | plain read MB/s |"
    );
    println!("|---|---|---|---|---|---|---|");
    for round in 1..=3 {
        let t = Instant::now();
        sim.checkpoint(&ck).expect("checkpoint");
        sync(&ck);
        let write = t.elapsed().as_secs_f64();
        let bytes = std::fs::metadata(&ck).expect("the checkpoint").len() as usize;
        let plain_w = plain_write(&plain, bytes);
        let t = Instant::now();
        let mut again = circles(&rt, &[], &[], side, Params::default()).expect("circles");
        again.resume(&ck).expect("resume");
        let read = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let back = std::fs::read(&plain).expect("the plain file");
        let plain_r = t.elapsed().as_secs_f64();
        assert_eq!(back.len(), bytes);
        let mb = |s: f64| bytes as f64 / 1e6 / s;
        println!(
            "| {round} | {:.0} | {:.0} | {:.2} | {:.0} | {:.2} | {:.0} |",
            mb(write),
            mb(plain_w),
            plain_w / write,
            mb(read),
            plain_w / read,
            mb(plain_r)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
