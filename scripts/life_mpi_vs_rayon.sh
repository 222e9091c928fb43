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
# next run), and runs each version twice: with 0 generations (reading the
# pattern, building the board and, under MPI, partitioning it with METIS) and
# with GENERATIONS. Prints the wall times, the time of the steps alone (the
# difference) and the ratios MPI/rayon. Both versions must print the same
# populations (generation 0 and the last), or the script fails.
set -euo pipefail
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

now() { date +%s.%N; }
# Runs "$@" --generations $1 ..., prints its wall time in seconds; stdout to $2.
timed() {
    local n=$1 out=$2 start end
    shift 2
    start=$(now)
    "$@" --size "$size" --pattern "$pattern" --generations "$n" --every "$generations" > "$out"
    end=$(now)
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }'
}

out=$target/life-mpi-vs-rayon
echo "life $size, $generations generations, random start $pattern"
mpi_setup=$(timed 0 "$out/mpi-0.txt" mpirun -n 2 "$life" --backend seq)
mpi=$(timed "$generations" "$out/mpi.txt" mpirun -n 2 "$life" --backend seq)
rayon_setup=$(timed 0 "$out/rayon-0.txt" env RAYON_NUM_THREADS=2 "$life" --backend rayon)
rayon=$(timed "$generations" "$out/rayon.txt" env RAYON_NUM_THREADS=2 "$life" --backend rayon)
cmp -s "$out/mpi.txt" "$out/rayon.txt" || {
    echo "the populations differ:" >&2
    paste "$out/mpi.txt" "$out/rayon.txt" >&2
    exit 1
}
sed 's/^/  generation, population: /' "$out/rayon.txt"

awk -v g="$generations" -v ms="$mpi_setup" -v m="$mpi" -v rs="$rayon_setup" -v r="$rayon" 'BEGIN {
    printf "mpirun -n 2 life --backend seq:              wall %8.3f s (0 generations: %8.3f s; steps %8.3f s, %8.3f ms/step)\n", m, ms, m - ms, (m - ms) * 1000 / g
    printf "RAYON_NUM_THREADS=2 life --backend rayon:    wall %8.3f s (0 generations: %8.3f s; steps %8.3f s, %8.3f ms/step)\n", r, rs, r - rs, (r - rs) * 1000 / g
    printf "ratio mpi/rayon: wall %.3f, steps only %.3f\n", m / r, (m - ms) / (r - rs)
}'
