//! The JIT's code caches: memory, disk, several processes, damaged objects,
//! compiler failures.
#![cfg(feature = "jit")]

use std::path::{Path, PathBuf};
use std::process::Command;

use op2::prelude::*;
use op2::{CodeCacheStats, Error, RuntimeOptions};

#[op2::kernel]
fn scale_add(x: &mut f64, total: &mut f64) {
    *x = *x * 2.0 + 1.0;
    *total += *x;
}

/// A fresh, empty cache directory for one test.
fn fresh_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("jit-cache-test-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn runtime(dir: &Path) -> Runtime {
    Runtime::with_options(Backend::Jit, RuntimeOptions::default().threads(2).cache_dir(dir)).unwrap()
}

/// Runs the loop once and checks its result.
fn run_loop(rt: &Runtime) {
    let s = Set::new("s", 1000).unwrap();
    let x = Dat::from_vec("x", &s, 1, (0..1000).map(f64::from).collect()).unwrap();
    let total = Global::scalar("total", 0.0);
    par_loop!(rt, scale_add, s, x(RW), total(INC)).unwrap();
    assert_eq!(x.data_ro()[999], 1999.0);
    assert_eq!(total.value(), (0..1000).map(|i| 2.0 * i as f64 + 1.0).sum::<f64>());
}

fn objects(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "so"))
        .collect();
    v.sort();
    v
}

#[test]
fn cold_cache_compiles_then_memory_and_disk_hit() {
    let dir = fresh_dir("cold");
    let rt = runtime(&dir);
    run_loop(&rt);
    run_loop(&rt);
    assert_eq!(
        rt.code_cache_stats(),
        CodeCacheStats {
            compiled: 1,
            disk_hits: 0,
            memory_hits: 1,
            rebuilt: 0
        }
    );
    assert_eq!(objects(&dir).len(), 1);
    // A new runtime (empty memory cache) finds the object on disk.
    let rt2 = runtime(&dir);
    run_loop(&rt2);
    assert_eq!(rt2.code_cache_stats().compiled, 0);
    assert_eq!(rt2.code_cache_stats().disk_hits, 1);
}

#[test]
fn objects_are_named_by_a_128_bit_key_of_the_source_and_the_compiler() {
    let dir = fresh_dir("names");
    run_loop(&runtime(&dir));
    // Other flags, other machine code: another key, so never the first object.
    let other = RuntimeOptions::default()
        .threads(2)
        .cflags("-O1 -fopenmp")
        .cache_dir(&dir);
    let rt = Runtime::with_options(Backend::Jit, other).unwrap();
    run_loop(&rt);
    assert_eq!(rt.code_cache_stats().compiled, 1);
    let objects = objects(&dir);
    assert_eq!(objects.len(), 2, "{objects:?}");
    for object in &objects {
        let stem = object.file_stem().unwrap().to_str().unwrap();
        let key = stem.strip_prefix("op2_scale_add_").unwrap_or_else(|| panic!("{stem}"));
        assert_eq!(key.len(), 32, "{stem}: a 128-bit key is 32 hex digits");
        assert!(
            key.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
            "{stem}"
        );
    }
}

/// Run by the parent tests in a child process: one loop, then its stats.
#[test]
#[ignore = "run as a child process by the cache tests"]
fn child_runs_one_loop() {
    let Some(dir) = std::env::var_os("OP2_JIT_TEST_DIR") else {
        return;
    };
    let rt = runtime(Path::new(&dir));
    run_loop(&rt);
    let s = rt.code_cache_stats();
    println!(
        "\nSTATS compiled={} disk_hits={} rebuilt={}",
        s.compiled, s.disk_hits, s.rebuilt
    );
}

fn child(dir: &Path) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_runs_one_loop",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("OP2_JIT_TEST_DIR", dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// (compiled, disk hits, rebuilt) as the child reported them.
fn child_stats(c: std::process::Child) -> (usize, usize, usize) {
    let out = c.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = text
        .lines()
        .find_map(|l| l.find("STATS").map(|at| &l[at..]))
        .expect("child printed its stats");
    let num = |key: &str| -> usize {
        let at = line.find(key).unwrap() + key.len();
        line[at..].split_whitespace().next().unwrap().parse().unwrap()
    };
    (num("compiled="), num("disk_hits="), num("rebuilt="))
}

#[test]
fn a_second_process_finds_the_object_on_disk() {
    let dir = fresh_dir("processes");
    assert_eq!(child_stats(child(&dir)), (1, 0, 0));
    assert_eq!(child_stats(child(&dir)), (0, 1, 0));
}

#[test]
fn two_processes_on_an_empty_cache_both_succeed() {
    let dir = fresh_dir("race");
    let (a, b) = (child(&dir), child(&dir));
    let (sa, sb) = (child_stats(a), child_stats(b));
    // Each either compiled or found the other's object; both ran correctly.
    assert_eq!(sa.0 + sa.1, 1);
    assert_eq!(sb.0 + sb.1, 1);
    assert_eq!(sa.2 + sb.2, 0, "nobody saw half a file");
    assert_eq!(objects(&dir).len(), 1, "one object, no temporary files left as objects");
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

// Damage happens between processes (a crashed compile, a bad disk): a
// process never rewrites an object it has loaded itself.

#[test]
fn a_truncated_object_is_rebuilt() {
    let dir = fresh_dir("truncated");
    assert_eq!(child_stats(child(&dir)), (1, 0, 0));
    let obj = objects(&dir).pop().unwrap();
    let len = std::fs::metadata(&obj).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&obj)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    assert_eq!(child_stats(child(&dir)), (1, 0, 1));
    assert_eq!(std::fs::metadata(&obj).unwrap().len(), len);
    assert_eq!(child_stats(child(&dir)), (0, 1, 0));
}

#[test]
fn a_corrupt_object_is_rebuilt() {
    let dir = fresh_dir("corrupt");
    assert_eq!(child_stats(child(&dir)), (1, 0, 0));
    let obj = objects(&dir).pop().unwrap();
    let mut bytes = std::fs::read(&obj).unwrap();
    bytes[100] ^= 0xff;
    std::fs::write(&obj, bytes).unwrap();
    assert_eq!(child_stats(child(&dir)), (1, 0, 1));
}

static BROKEN_PARAMS: [op2::ParamInfo; 1] = [op2::ParamInfo::scalar("x", op2::ScalarType::F64, true)];
static BROKEN: op2::KernelInfo = op2::KernelInfo {
    name: "broken",
    params: &BROKEN_PARAMS,
    c_source: "void op2_kernel_broken(double *x) { *x = this_is_not_defined; }",
    uses: op2::KernelUses::NOTHING,
};

#[test]
fn a_broken_kernel_returns_the_compiler_log_and_keeps_the_source() {
    let dir = fresh_dir("broken");
    let rt = runtime(&dir);
    let s = Set::new("s", 3).unwrap();
    let x = Dat::<f64>::zeros("x", &s, 1).unwrap();
    let args = [op2::__private::DirectArg::arg_spec(&x, Access::Rw)];
    let e = rt.par_loop(&BROKEN, &s, None, &args, &|_, _| {}).unwrap_err();
    match &e {
        Error::JitCompile {
            loop_name,
            source_path,
            log,
        } => {
            assert_eq!(loop_name, "broken");
            assert!(log.contains("this_is_not_defined"), "{log}");
            let kept = std::fs::read_to_string(source_path).unwrap();
            assert!(kept.contains("op2_kernel_broken"));
        }
        other => panic!("expected JitCompile, got {other:?}"),
    }
    assert!(e.to_string().contains("broken"));
    assert!(objects(&dir).is_empty());
    assert!(x.try_data_mut().is_ok(), "borrows released after the failure");
}

#[test]
fn a_missing_compiler_names_the_command() {
    let dir = fresh_dir("nocc");
    let e = Runtime::with_options(
        Backend::Jit,
        RuntimeOptions::default().cc("op2-no-such-compiler").cache_dir(&dir),
    )
    .unwrap_err();
    assert!(matches!(e, Error::CompilerNotFound { .. }), "{e:?}");
    assert!(e.to_string().contains("op2-no-such-compiler"), "{e}");
}

#[test]
fn bad_flags_are_a_compile_error_with_the_log() {
    let dir = fresh_dir("badflags");
    let rt = Runtime::with_options(
        Backend::Jit,
        RuntimeOptions::default().cflags("-O2 --op2-not-a-flag").cache_dir(&dir),
    )
    .unwrap();
    let s = Set::new("s", 3).unwrap();
    let x = Dat::<f64>::zeros("x", &s, 1).unwrap();
    let total = Global::scalar("total", 0.0);
    let e = par_loop!(rt, scale_add, s, x(RW), total(INC)).unwrap_err();
    assert!(matches!(e, Error::JitCompile { .. }), "{e:?}");
    assert!(e.to_string().contains("op2-not-a-flag"), "{e}");
}

/// Checks that a cache error names `path`, the cache directory `dir` and how
/// to choose another directory.
fn assert_names_cache_dir(e: &Error, path: &Path, dir: &Path) {
    assert!(matches!(e, Error::Io { .. }), "{e:?}");
    let text = e.to_string();
    for part in [
        &path.display().to_string(),
        &dir.display().to_string(),
        "OP2_CACHE_DIR",
        "RuntimeOptions::cache_dir",
    ] {
        assert!(text.contains(part), "{text:?} should mention {part:?}");
    }
}

#[test]
fn a_cache_directory_that_cannot_be_created_is_named_with_the_way_out() {
    let parent = fresh_dir("under-a-file");
    let file = parent.join("plain-file");
    std::fs::write(&file, "not a directory").unwrap();
    let dir = file.join("cache");
    let e = Runtime::with_options(Backend::Jit, RuntimeOptions::default().cache_dir(&dir)).unwrap_err();
    assert_names_cache_dir(&e, &dir, &dir);
    assert!(e.to_string().contains("cannot create the code cache directory"), "{e}");
}

#[test]
fn a_cache_directory_that_cannot_be_written_is_named_with_the_way_out() {
    // Created with the runtime, then replaced by a regular file: the loop's
    // source cannot be written there (as in a read-only directory, which the
    // root user of a container could still write to).
    let dir = fresh_dir("unwritable");
    let rt = runtime(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::write(&dir, "not a directory").unwrap();
    let s = Set::new("s", 3).unwrap();
    let x = Dat::<f64>::zeros("x", &s, 1).unwrap();
    let total = Global::scalar("total", 0.0);
    let e = par_loop!(rt, scale_add, s, x(RW), total(INC)).unwrap_err();
    let Error::Io { path, .. } = &e else {
        panic!("expected Io, got {e:?}")
    };
    assert!(path.starts_with(&dir) && path != &dir, "{}", path.display());
    assert_names_cache_dir(&e, path, &dir);
    assert!(x.try_data_mut().is_ok(), "borrows released after the failure");
    std::fs::remove_file(&dir).unwrap();
}
