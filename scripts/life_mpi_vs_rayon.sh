#!/usr/bin/env bash
# Game of Life on two cores, two ways, in one run: 2 MPI ranks of the `seq`
# backend (`mpirun -n 2 life --backend seq`) against one process of the
# `rayon` backend on 2 threads (`RAYON_NUM_THREADS=2 life --backend rayon`).
#
#   scripts/life_mpi_vs_rayon.sh [WxH] [GENERATIONS]    # default 4096x4096 100
#
# Builds the life example in release with `--features mpi`, writes a random
# start (~30% live cells, Python's random with a fixed seed, so every run uses
# the same board) as a `.cells` file under the target directory (kept for the
# next run), and runs each version once. Prints each run's wall time and the
# time of its steps alone: from the line of generation 0 (printed once the
# pattern is read, the board built and, under MPI, partitioned with METIS) to
# the line of the last generation (the steps and one population count), each
# line stamped as it arrives. Then the ratios MPI/rayon of both. The two
# versions must print the same populations, or the script fails.
set -euo pipefail
export LC_ALL=C # a decimal point in $EPOCHREALTIME
[[ -n ${EPOCHREALTIME:-} ]] || { echo "$0 needs bash 5 or later" >&2; exit 2; }
cd "$(dirname "$0")/.."
size=${1:-4096x4096}
generations=${2:-100}
[[ $size =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] || { echo "usage: $0 [WxH] [GENERATIONS]" >&2; exit 2; }
[[ $generations =~ ^[1-9][0-9]*$ ]] || { echo "GENERATIONS must be a positive integer" >&2; exit 2; }
width=${size%x*}
height=${size#*x}

cargo build --release --features mpi --example life
target=${CARGO_TARGET_DIR:-target}
life=$target/release/examples/life
mkdir -p "$target/life-mpi-vs-rayon"
pattern=$target/life-mpi-vs-rayon/random-$size.cells
if [ ! -s "$pattern" ]; then
    python3 - "$width" "$height" "$pattern" <<'EOF'
import random, sys
width, height, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = random.Random(14)
with open(path + ".tmp", "w") as f:
    f.write(f"!Random {width}x{height}, ~30% alive (Python random, seed 14)\n")
    for _ in range(height):
        f.write("".join(rng.choices("O.", weights=(3, 7), k=width)) + "\n")
EOF
    mv "$pattern.tmp" "$pattern"
fi

# Runs "$@" on the board for $generations generations, printing generation 0
# and the last; writes to $1 each output line after the time it arrived (s).
# Prints the run's wall time (s).
timed() {
    local out=$1 start end line
    shift
    start=$EPOCHREALTIME
    "$@" --size "$size" --pattern "$pattern" --generations "$generations" --every "$generations" |
        while IFS= read -r line; do echo "$EPOCHREALTIME $line"; done > "$out" || return
    end=$EPOCHREALTIME
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }'
}
# The seconds between the first and the last line of a timed run's output.
steps() { awk 'NR == 1 { a = $1 } { b = $1 } END { printf "%.3f", b - a }' "$1"; }
# The output lines without their times.
lines() { cut -d' ' -f2- "$1"; }

out=$target/life-mpi-vs-rayon
echo "life $size, $generations generations, random start $pattern"
mpi=$(timed "$out/mpi.txt" mpirun -n 2 "$life" --backend seq)
rayon=$(timed "$out/rayon.txt" env RAYON_NUM_THREADS=2 "$life" --backend rayon)
cmp -s <(lines "$out/mpi.txt") <(lines "$out/rayon.txt") || {
    echo "the populations differ:" >&2
    paste <(lines "$out/mpi.txt") <(lines "$out/rayon.txt") >&2
    exit 1
}
lines "$out/rayon.txt" | sed 's/^/  generation, population: /'

awk -v g="$generations" -v m="$mpi" -v ms="$(steps "$out/mpi.txt")" -v r="$rayon" -v rs="$(steps "$out/rayon.txt")" 'BEGIN {
    printf "mpirun -n 2 life --backend seq:            wall %8.3f s, steps %8.3f s (%8.3f ms/step)\n", m, ms, ms * 1000 / g
    printf "RAYON_NUM_THREADS=2 life --backend rayon:  wall %8.3f s, steps %8.3f s (%8.3f ms/step)\n", r, rs, rs * 1000 / g
    printf "ratio mpi/rayon: wall %.3f, steps %.3f\n", m / r, ms / rs
}'
