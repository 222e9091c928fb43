#!/usr/bin/env bash
# Game of Life on two cores, two ways, in one run: 2 MPI ranks of the `seq`
# backend (`mpirun -n 2 life --backend seq`) against one process of the
# `rayon` backend on 2 threads (`RAYON_NUM_THREADS=2 life --backend rayon`).
#
#   scripts/life_mpi_vs_rayon.sh [WxH] [GENERATIONS]    # default 4096x4096 100
#
# Writes a random start (~30% live cells, Python's random with a fixed seed,
# so every run uses the same board) as a `.cells` file under the target
# directory (kept for the next run), and times the two versions with
# scripts/mpi_vs_rayon.sh: the steps are timed from the line of generation 0
# to the line of the last generation, and the two versions must print the
# same populations.
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-4096x4096}
generations=${2:-100}
[[ $size =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] || { echo "usage: $0 [WxH] [GENERATIONS]" >&2; exit 2; }
[[ $generations =~ ^[1-9][0-9]*$ ]] || { echo "GENERATIONS must be a positive integer" >&2; exit 2; }
width=${size%x*}
height=${size#*x}

target=${CARGO_TARGET_DIR:-target}
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

echo "life $size, $generations generations, random start $pattern"
STEPS_PER_LINE=$generations exec scripts/mpi_vs_rayon.sh life --size "$size" --pattern "$pattern" --generations "$generations" --every "$generations"
