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
[ "$ranks" -ge 2 ] 2>/dev/null || { echo "memory_per_rank: RANKS must be 2 or more (Airfoil prints a rank's peak only under mpirun -n 2 or more)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "memory_per_rank: needs GNU time at /usr/bin/time (Debian/Ubuntu: apt-get install time)" >&2; exit 2; }
command -v mpirun > /dev/null || { echo "memory_per_rank: needs mpirun (MPICH)" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
args=(--iterations 10 --backend seq)

"$airfoil" --mesh "$mesh" --iterations 1 --backend seq --write-grid "$dir/big.h5" > /dev/null
"$airfoil" --mesh 10x20 --iterations 1 --backend seq --write-grid "$dir/tiny.h5" > /dev/null

# One process, the whole grid: its peak in MiB (GNU time's maximum RSS).
alone() {
    /usr/bin/time -f "%M" -o "$dir/rss" "$airfoil" --grid "$1" "${args[@]}" > /dev/null ||
        { echo "memory_per_rank: $airfoil --grid $1 failed" >&2; return 1; }
    # The last line: GNU time puts a failed command's status before it.
    tail -n 1 "$dir/rss" | awk '{ printf "%.1f", $1 / 1024 }'
}
# P ranks from blocks: the largest rank's peak in MiB, as Airfoil prints them.
shared() {
    mpirun -n "$ranks" "$airfoil" --grid "$1" --distribute blocks "${args[@]}" > "$dir/out" ||
        { echo "memory_per_rank: mpirun -n $ranks $airfoil --grid $1 failed" >&2; return 1; }
    sed -n 's/^peak resident memory per rank (MiB): //p' "$dir/out" |
        tr ',' '\n' | sort -g | tail -n 1 | tr -d ' '
}
# A figure, or the script stops saying which is missing.
need() { [ -n "$2" ] || { echo "memory_per_rank: no figure for $1" >&2; exit 1; }; }

# (An assignment from a failed $(...) stops the script, under set -e.)
one_big=$(alone "$dir/big.h5")
one_tiny=$(alone "$dir/tiny.h5")
p_big=$(shared "$dir/big.h5")
p_tiny=$(shared "$dir/tiny.h5")
need "one process" "$one_big"
need "one process, tiny mesh" "$one_tiny"
need "$ranks ranks (was airfoil built with mpi, hdf5 and ptscotch?)" "$p_big"
need "$ranks ranks, tiny mesh" "$p_tiny"
echo "one process: $one_big MiB ($one_tiny MiB on a tiny mesh)"
echo "$ranks ranks from blocks, largest rank: $p_big MiB ($p_tiny MiB on a tiny mesh)"
awk -v a="$one_big" -v b="$one_tiny" -v c="$p_big" -v d="$p_tiny" -v p="$ranks" 'BEGIN {
    printf "beyond the libraries: one process %.1f MiB, a rank %.1f MiB: ratio %.3f (ideal %.3f)\n",
        a - b, c - d, (c - d) / (a - b), 1 / p
}'
