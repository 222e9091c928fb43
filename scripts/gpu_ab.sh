#!/usr/bin/env bash
# Airfoil on 720 000 cells from two GPU bundles (scripts/gpu_bundle.sh), interleaved
# on one GPU so that drift between runs falls on both: the same change measured
# before and after, as ratios in one run. On the GPU machine:
#
#   bash scripts/gpu_ab.sh BEFORE_DIR AFTER_DIR [ROUNDS]
#
# Each round runs before and after with colouring, then with atomics; every run
# must print PASSED, and its "ms/iteration" figure is collected in a table.
set -uo pipefail
before=${1:?bundle before the change}
after=${2:?bundle after the change}
rounds=${3:-2}
nvrtc=$(ls /usr/local/cuda*/lib64/libnvrtc.so* /usr/local/lib/python3*/dist-packages/nvidia/cu*/lib/libnvrtc.so* \
    /opt/*/.venv/lib/python3*/site-packages/nvidia/cu*/lib/libnvrtc.so* 2>/dev/null | grep -v builtins | head -1)
lib=$(mktemp -d)
[ -n "$nvrtc" ] && ln -sf "$nvrtc" "$lib/libnvrtc.so" && export LD_LIBRARY_PATH="$lib:$(dirname "$nvrtc"):${LD_LIBRARY_PATH:-}"
export OP2_REQUIRE_GPU=1
status=0
echo "| round | increments | before ms/iter | after ms/iter |"
echo "|---|---|---|---|"
for round in $(seq 1 "$rounds"); do
    for inc in colouring atomics; do
        row="| $round | $inc"
        for dir in "$before" "$after"; do
            log=$(mktemp)
            OP2_CACHE_DIR="$dir/op2-cache" "$dir/airfoil" --backend cuda --increments "$inc" > "$log" 2>&1
            grep -q '^PASSED' "$log" || { status=1; tail -n 5 "$log" >&2; }
            ms=$(grep -oE '[0-9.]+ ms/iteration' "$log" | grep -oE '^[0-9.]+' | head -1)
            row="$row | ${ms:-?}"
        done
        echo "$row |"
    done
done
rm -rf "$lib"
exit $status
