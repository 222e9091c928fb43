#!/usr/bin/env bash
# Builds, here, everything the CUDA checks need on a GPU machine that has the
# NVIDIA driver and NVRTC but no Rust toolchain (and no network), into one
# folder with a `run.sh` to start there:
#
#   scripts/gpu_bundle.sh [DIR]      # default .gpu-bundle (git-ignored)
#   # copy DIR to the GPU machine, then, in it:
#   bash run.sh                      # OP2_REQUIRE_GPU=1: a missing GPU fails
#
# run.sh runs the CUDA conformance suite and transfer tests (colouring and
# atomics), Airfoil on 720 000 cells with both (each must print PASSED),
# Circles at 20 000 and 1 000 000 agents with its timing summary, and the
# colouring-vs-atomics benchmark. Binaries are stripped to travel light.
# scripts/gpu_ab.sh runs Airfoil from two bundles interleaved (before and
# after a change, on the same GPU).
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
        --test conformance --test device_transfers --test cuda_ptx
    cargo build --release --features cuda --example airfoil --example circles --message-format=json
    cargo bench --features cuda --bench device --no-run --message-format=json
} | executables | while read -r exe; do
    name=$(basename "$exe")
    name=${name%-*} # drop cargo's hash suffix (examples have none)
    cp "$exe" "$out/$name"
    strip "$out/$name" 2>/dev/null || true
done

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
./conformance --test-threads=1 cuda || status=1
./device_transfers --test-threads=1 cuda || status=1
for inc in colouring atomics; do
    ./airfoil --backend cuda --increments "$inc" | tee "airfoil-$inc.log" || status=1
    grep -q '^PASSED' "airfoil-$inc.log" || status=1
done
# One short run first: the programs are compiled (and cached) outside the timed runs.
./circles --agents 1000 --steps 1 --backend cuda > /dev/null || status=1
for n in 20000 1000000; do
    ./circles --agents "$n" --steps 50 --report 50 --backend cuda --timings || status=1
done
./device --bench || status=1
exit $status
RUN
chmod +x "$out/run.sh"
ls -la "$out"
du -sh "$out"
