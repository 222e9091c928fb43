#!/usr/bin/env bash
# One example on two cores, two ways, in one run: 2 MPI ranks of the `seq`
# backend (`mpirun -n 2 EXAMPLE ARGS --backend seq`) against one process of
# the `rayon` backend on 2 threads (`RAYON_NUM_THREADS=2 EXAMPLE ARGS
# --backend rayon`).
#
#   scripts/mpi_vs_rayon.sh EXAMPLE ARGS...
#   scripts/mpi_vs_rayon.sh sir --graph ba:1000000,5 --seed-node 0 \
#       --p-infect 0.05 --p-recover 0.1 --ticks 40 --seed 3
#
# Builds the example in release with `--features mpi` and runs each version
# once. The example prints one line per step it reports (Life's generations,
# SIR's ticks); each line is stamped as it arrives. Prints each run's wall
# time and the time of its steps alone: from the first line (printed once the
# input is read, the model built and, under MPI, distributed) to the last,
# per step (`STEPS_PER_LINE` steps between two lines, default 1). Then the
# ratios MPI/rayon. The two versions must print the same lines, or the script
# fails.
set -euo pipefail
export LC_ALL=C # a decimal point in $EPOCHREALTIME
[[ -n ${EPOCHREALTIME:-} ]] || { echo "$0 needs bash 5 or later" >&2; exit 2; }
[[ $# -ge 1 ]] || { echo "usage: $0 EXAMPLE ARGS..." >&2; exit 2; }
cd "$(dirname "$0")/.."
example=$1
shift

cargo build --release --features mpi --example "$example"
target=${CARGO_TARGET_DIR:-target}
bin=$target/release/examples/$example
out=$target/mpi-vs-rayon
mkdir -p "$out"

# Runs "$@" with the example's arguments, writing to $1 each output line after
# the time it arrived (s). Prints the run's wall time (s).
timed() {
    local file=$1 start end line
    shift
    start=$EPOCHREALTIME
    "$@" | while IFS= read -r line; do echo "$EPOCHREALTIME $line"; done > "$file" || return
    end=$EPOCHREALTIME
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }'
}
# The seconds between the first and the last line of a timed run's output.
steps() { awk 'NR == 1 { a = $1 } { b = $1 } END { printf "%.3f", b - a }' "$1"; }
# The output lines without their times.
lines() { cut -d' ' -f2- "$1"; }

mpi=$(timed "$out/$example-mpi.txt" mpirun -n 2 "$bin" "$@" --backend seq)
rayon=$(timed "$out/$example-rayon.txt" env RAYON_NUM_THREADS=2 "$bin" "$@" --backend rayon)
cmp -s <(lines "$out/$example-mpi.txt") <(lines "$out/$example-rayon.txt") || {
    echo "the outputs differ:" >&2
    paste <(lines "$out/$example-mpi.txt") <(lines "$out/$example-rayon.txt") >&2
    exit 1
}
lines_between=$(($(wc -l < "$out/$example-rayon.txt") - 1))
[[ $lines_between -ge 1 ]] || { echo "the example printed fewer than two lines: nothing to time" >&2; exit 1; }
n=$((lines_between * ${STEPS_PER_LINE:-1}))
echo "$example $*: outputs agree ($((lines_between + 1)) lines, $n steps timed; first and last below)"
lines "$out/$example-rayon.txt" | sed -n '1p;$p' | sed 's/^/  /'
awk -v n="$n" -v m="$mpi" -v ms="$(steps "$out/$example-mpi.txt")" -v r="$rayon" -v rs="$(steps "$out/$example-rayon.txt")" 'BEGIN {
    printf "mpirun -n 2, backend seq:           wall %8.3f s, steps %8.3f s (%8.3f ms/step)\n", m, ms, ms * 1000 / n
    printf "RAYON_NUM_THREADS=2, backend rayon: wall %8.3f s, steps %8.3f s (%8.3f ms/step)\n", r, rs, rs * 1000 / n
    printf "ratio mpi/rayon: wall %.3f, steps %.3f\n", m / r, ms / rs
}'
