#!/usr/bin/env bash
# Peak resident memory of Airfoil read in blocks on P ranks against one
# process reading the same HDF5 grid, both beyond what a tiny mesh costs
# (what every process spends on MPI, HDF5 and the runtime):
#
#   ratio = (rank's peak - tiny mesh's rank peak) / (one process's peak - tiny mesh's peak)
#
# 1/P is the ideal; halos, the partitioner and the rows in flight add to it.
# Usage (the example built with features mpi, hdf5 and ptscotch):
#
#   scripts/memory_per_rank.sh target/release/examples/airfoil [P] [MESH]
#
# MESH is the generator's IxJ (default 400x600: 720 000 cells). The grid
# files go to a temporary folder, removed at the end.
set -euo pipefail
airfoil=${1:?usage: memory_per_rank.sh AIRFOIL_BINARY [RANKS] [MESH]}
ranks=${2:-4}
mesh=${3:-400x600}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
args=(--iterations 10 --backend seq)

"$airfoil" --mesh "$mesh" --iterations 1 --backend seq --write-grid "$dir/big.h5" > /dev/null
"$airfoil" --mesh 10x20 --iterations 1 --backend seq --write-grid "$dir/tiny.h5" > /dev/null

# One process, the whole grid: its peak in MiB (GNU time's maximum RSS).
alone() {
    /usr/bin/time -f "%M" -o "$dir/rss" "$airfoil" --grid "$1" "${args[@]}" > /dev/null
    awk '{ printf "%.1f", $1 / 1024 }' "$dir/rss"
}
# P ranks from blocks: the largest rank's peak in MiB, as Airfoil prints them.
shared() {
    mpirun -n "$ranks" "$airfoil" --grid "$1" --distribute blocks "${args[@]}" |
        sed -n 's/^peak resident memory per rank (MiB): //p' |
        tr ',' '\n' | sort -g | tail -n 1 | tr -d ' '
}

one_big=$(alone "$dir/big.h5")
one_tiny=$(alone "$dir/tiny.h5")
p_big=$(shared "$dir/big.h5")
p_tiny=$(shared "$dir/tiny.h5")
echo "one process: $one_big MiB ($one_tiny MiB on a tiny mesh)"
echo "$ranks ranks from blocks, largest rank: $p_big MiB ($p_tiny MiB on a tiny mesh)"
awk -v a="$one_big" -v b="$one_tiny" -v c="$p_big" -v d="$p_tiny" -v p="$ranks" 'BEGIN {
    printf "beyond the libraries: one process %.1f MiB, a rank %.1f MiB: ratio %.3f (ideal %.3f)\n",
        a - b, c - d, (c - d) / (a - b), 1 / p
}'
