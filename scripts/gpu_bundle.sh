#!/usr/bin/env bash
# Builds, here, everything the CUDA checks need on a GPU machine that has the
# NVIDIA driver and NVRTC but no Rust toolchain (and no network), into one
# folder with a `run.sh` to start there:
#
#   scripts/gpu_bundle.sh [DIR]      # default .gpu-bundle (git-ignored)
#   # copy DIR to the GPU machine, then, in it:
#   bash run.sh                      # OP2_REQUIRE_GPU=1: a missing GPU fails
#
# run.sh runs the CUDA conformance suite, transfer tests, an ensemble on
# cuda and the model layer's tests (Circles and predator-prey on cuda, bitwise against their
# hand-wired versions on seq, host reductions), checkpoints written and
# resumed on cuda (with the HDF5 libraries the bundle carries, should the
# machine lack them), then prints one
# table of Airfoil on 720 000 cells (each run must print PASSED): op2-rs
# `cuda` with colouring and atomics, each with Dats in columns (struct of
# arrays, the default) and in rows, and with increments measured per loop
# (`auto`), interleaved over two rounds with OP2's
# own CUDA Airfoil (array of structs and --force_soa) when the bundle carries
# it; then Circles at 20 000, 100 000, 1 000 000 and 4 000 000 agents with
# their timing summaries, Circles and predator-prey on `cuda` against `seq`
# (every line equal), Boids' log on `cuda` against `seq` and its step at 100 000
# and 1 000 000 boids, the device benchmark, and last Airfoil on the host's
# cores (scripts/host_figures.sh: rayon and jit, 1, 4 and 16 threads,
# partitions and colours, the bandwidth floor, the time in cache, and rayon's
# own team against its shared one on 16; no OP2, no renumbering: those are in
# `run.sh host`). Each part prints the seconds
# it began at: the whole must fit in 3 minutes of GPU time.
#
#   bash run.sh host                 # only the host's cores, every CPU figure:
#                                    # 1-16 threads, OP2's OpenMP built there
#
# OP2's Airfoil: when OP2_BUNDLE (default target/op2-bundle) holds a bundle
# of OP2-Common's own classic Airfoil (see docs/ARCHITECTURE.md, "Checks on a
# GPU": a build_and_run.sh beside OP2-Common/ with the app translated for CUDA
# twice, dp_classic and dp_classic_soa), a clean copy travels in DIR/op2
# (~3 MB) and run.sh builds it there with nvcc (about 40 s on 16 cores).
#
# Binaries are stripped to travel light. scripts/gpu_ab.sh runs Airfoil from
# two bundles interleaved (before and after a change, on the same GPU).
set -euo pipefail
out=${1:-.gpu-bundle}
rm -rf "$out"
mkdir -p "$out"

executables() { # cargo's JSON messages on stdin -> paths of built executables
    python3 -c 'import json, sys
for line in sys.stdin:
    try: m = json.loads(line)
    except ValueError: continue
    if m.get("reason") == "compiler-artifact" and m.get("executable"): print(m["executable"])'
}

{
    cargo test --release --features cuda --no-run --message-format=json \
        --test conformance --test device_transfers --test cuda_ptx --test model --test model_log --test ensemble \
        --test model_reductions
    cargo build --release --features cuda,jit --example airfoil --example circles --example predator_prey --example boids \
        --message-format=json
    cargo bench --features cuda --bench device --no-run --message-format=json
} | executables | while read -r exe; do
    name=$(basename "$exe")
    name=${name%-*} # drop cargo's hash suffix (examples have none)
    cp "$exe" "$out/$name"
    strip "$out/$name" 2>/dev/null || true
done

# Checkpoints on cuda (feature hdf5): the tests, and HDF5 with MPICH (the
# libraries it loads that a machine without them lacks; compressed, ~9 MB)
# in case the GPU machine has none.
cargo test --release --features cuda,hdf5 --no-run --message-format=json --test checkpoint --test mesh_checkpoint |
    executables | while read -r exe; do
    name=$(basename "$exe")
    cp "$exe" "$out/${name%-*}"
    strip "$out/${name%-*}" 2>/dev/null || true
done
libs=$(mktemp -d)
ldd "$out/checkpoint" "$out/mesh_checkpoint" | awk '/=> \// { print $3 }' | sort -u |
    grep -E '/lib(hdf5|mpich|sz|aec|hwloc|uc[mpst]|numa)[^/]*\.so' | while read -r lib; do
    cp -L "$lib" "$libs/"
done
tar -C "$libs" -cJf "$out/hdf5-lib.tar.xz" .
rm -rf "$libs"

op2_bundle=${OP2_BUNDLE:-target/op2-bundle}
if [ -f "$op2_bundle/build_and_run.sh" ]; then
    cp -r "$op2_bundle" "$out/op2"
    "$out/op2/build_and_run.sh" clean > /dev/null
else
    echo "no OP2 bundle at $op2_bundle: run.sh will time op2-rs alone (see docs/ARCHITECTURE.md, Checks on a GPU)"
fi

cat > "$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# The CUDA checks on a GPU machine (see scripts/gpu_bundle.sh).
set -uo pipefail
cd "$(dirname "$0")"
# cudarc looks for libnvrtc.so (or .so.12): point it at whichever NVRTC is here.
nvrtc=$(ls /usr/local/cuda*/lib64/libnvrtc.so* /usr/local/lib/python3*/dist-packages/nvidia/cu*/lib/libnvrtc.so* \
    /opt/*/.venv/lib/python3*/site-packages/nvidia/cu*/lib/libnvrtc.so* 2>/dev/null | grep -v builtins | head -1)
mkdir -p lib
[ -n "$nvrtc" ] && ln -sf "$nvrtc" lib/libnvrtc.so && export LD_LIBRARY_PATH="$PWD/lib:$(dirname "$nvrtc"):${LD_LIBRARY_PATH:-}"
echo "NVRTC: ${nvrtc:-not found}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
export OP2_REQUIRE_GPU=1 OP2_CACHE_DIR="$PWD/op2-cache" CARGO_TARGET_DIR="$PWD/target"
status=0
part() { echo; echo "== [${SECONDS} s] $*"; }
# `bash run.sh host`: only Airfoil on the host's cores, every CPU figure
# (host_figures.sh: 1 to 16 threads, two rounds, OP2's OpenMP Airfoil built
# from the bundle's copy when it carries one, the floor, the time in cache,
# renumbering, rayon's own team against its shared one).
if [ "${1:-}" = host ]; then
    part "Airfoil 720K on the host's cores, against OP2's OpenMP"
    OP2_BUNDLE=op2 bash host_figures.sh ./airfoil
    exit $?
fi
part "conformance and transfers"
./conformance --test-threads=1 cuda || status=1
./device_transfers --test-threads=1 cuda || status=1
# The model layer's examples on cuda against their hand-wired versions on seq.
./model --test-threads=1 || status=1
./model_log --test-threads=1 || status=1
# An ensemble's runs on cuda runtimes of their own, each as a lone run.
./ensemble --test-threads=1 || status=1
./model_reductions --test-threads=1 || status=1
part "checkpoints on cuda"
# HDF5 from the bundle where the machine has none.
if ldd ./checkpoint | grep -q "not found"; then
    mkdir -p hdf5-lib && tar -C hdf5-lib -xJf hdf5-lib.tar.xz
    echo "HDF5: the bundle's"
fi
for t in checkpoint mesh_checkpoint; do
    LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:$PWD/hdf5-lib" ./$t --test-threads=1 || status=1
done

# OP2's own CUDA Airfoil, built here when the bundle carries it.
op2_app=$PWD/op2/OP2-Common/apps/c/airfoil/airfoil_plain
op2=""
if [ -x op2/build_and_run.sh ]; then
    part "building OP2's CUDA Airfoil"
    if BUILD_ONLY=1 JOBS=$(nproc) op2/build_and_run.sh "" cuda > op2-build.log 2>&1; then
        op2=yes
        mkdir -p grid
        ./airfoil --iterations 0 --backend seq --write-grid grid/new_grid.dat > /dev/null || status=1
    else
        status=1
        tail -n 20 op2-build.log
    fi
fi

part "Airfoil 720K"
# One short run per variant first: programs are compiled (and cached) outside the timed runs.
for inc in colouring atomics; do
    for layout in soa aos; do
        OP2_DEVICE_LAYOUT=$layout ./airfoil --backend cuda --increments "$inc" --iterations 2 > /dev/null || status=1
    done
done
airfoil_ms() { # LOG -> ms per iteration
    grep -oE '[0-9.]+ ms/iteration' "$1" | grep -oE '^[0-9.]+' | head -1
}
table="| round | op2-rs colouring, columns | colouring, rows | atomics, columns | atomics, rows | auto, columns | OP2 AoS | OP2 SoA |
|---|---|---|---|---|---|---|---|"
for round in 1 2; do
    row="| $round"
    for inc in colouring atomics; do
        for layout in soa aos; do
            log=airfoil-$inc-$layout-$round.log
            OP2_DEVICE_LAYOUT=$layout ./airfoil --backend cuda --increments "$inc" > "$log" 2>&1 || status=1
            grep -q '^PASSED' "$log" || { status=1; tail -n 5 "$log"; }
            row="$row | $(airfoil_ms "$log")"
        done
    done
    # Each loop measures colouring against atomics at its first calls and keeps the faster.
    log=airfoil-auto-$round.log
    ./airfoil --backend cuda --increments auto > "$log" 2>&1 || status=1
    grep -q '^PASSED' "$log" || { status=1; tail -n 5 "$log"; }
    row="$row | $(airfoil_ms "$log")"
    for variant in aos soa; do
        if [ -n "$op2" ]; then
            dir=$op2_app/dp_classic
            [ "$variant" = soa ] && dir=$op2_app/dp_classic_soa
            log=op2-$variant-$round.log
            (cd grid && NITER=1000 "$dir/airfoil_cuda") > "$log" 2>&1 || status=1
            # OP2 prints the seconds of the 1000 iterations: ms per iteration.
            secs=$(grep -oE 'Max total runtime = *[0-9.]+' "$log" | grep -oE '[0-9.]+$')
            row="$row | ${secs:-?}"
        else
            row="$row | -"
        fi
    done
    table="$table
$row |"
done
echo "$table"
cat airfoil-colouring-soa-1.log
grep -h "note:" airfoil-auto-1.log

part "Circles"
./circles --agents 1000 --steps 1 --backend cuda > /dev/null || status=1
for n in 20000 100000 1000000 4000000; do
    ./circles --agents "$n" --steps 50 --report 50 --backend cuda --timings 2>&1 | tee "circles-$n.log" || status=1
done
grep -h "ms per step" circles-*.log
# Its move kernel's math is op2's own (portable_math): cuda prints seq's checksums.
./circles --agents 20000 --steps 30 --report 5 --backend seq > circles-seq.txt 2> /dev/null || status=1
./circles --agents 20000 --steps 30 --report 5 --backend cuda > circles-cuda.txt 2> /dev/null || status=1
if cmp circles-seq.txt circles-cuda.txt; then echo "circles: cuda prints what seq prints"; else status=1; fi

part "predator-prey against seq"
./predator_prey --backend seq > pp-seq.log 2> /dev/null || status=1
./predator_prey --backend cuda > pp-cuda.log 2> /dev/null || status=1
if cmp pp-seq.log pp-cuda.log; then echo "predator-prey: cuda prints what seq prints"; else status=1; fi

part "boids against seq"
./boids --agents 20000 --steps 50 --log-every 5 --backend seq --log boids-seq.csv > /dev/null 2>&1 || status=1
./boids --agents 20000 --steps 50 --log-every 5 --backend cuda --log boids-cuda.csv > /dev/null || status=1
if cmp boids-seq.csv boids-cuda.csv; then echo "boids: cuda logs what seq logs"; else status=1; fi
for n in 100000 1000000; do
    ./boids --agents "$n" --steps 50 --backend cuda > /dev/null || status=1
done

part "device benchmark"
./device --bench || status=1

# The host's cores, briefly (`bash run.sh host` runs every figure, with OP2).
part "Airfoil 720K on the host's cores"
THREADS="1 4 16" ROUNDS=1 ITERATIONS=30 OP2_BUNDLE=none RENUMBER=0 bash host_figures.sh ./airfoil || status=1
part "done (status $status)"
exit $status
RUN
chmod +x "$out/run.sh"
cp scripts/host_figures.sh "$out/"
ls -la "$out"
du -sh "$out"
# The device tool carries at most 64 MiB with the working tree.
size=$(du -sm "$out" | cut -f1)
[ "$size" -lt 60 ] || echo "warning: $out is $size MiB: near the 64 MiB the device tool carries" >&2
