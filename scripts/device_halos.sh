#!/usr/bin/env bash
# Airfoil on a device backend, one rank against `mpirun -n RANKS` on the same
# device(s), with halos exchanged in device memory (`OP2_DEVICE_HALOS=on`, the
# default) and through the host whole (`off`), in one run:
#
#   scripts/device_halos.sh [BACKEND [RANKS [ITERATIONS]]] [-- AIRFOIL ARGS...]
#   scripts/device_halos.sh opencl 2 20            # PoCL: the built-in mesh
#   scripts/device_halos.sh cuda 2 200 -- --increments atomics
#
# Prints, per run, ms/iteration and rank 0's bytes over the bus (host <-> device)
# per iteration, whole-Dat copies and halo records apart. The bytes per
# iteration are the difference between a run of 2N iterations and one of N,
# divided by N, so the one-off uploads of the first iteration drop out. Then
# the ratio of bus bytes per iteration, host halos over device halos, and the
# halo records' share of the bus traffic. (That both ways compute the same is
# the tests' part: tests/mpi/device_halos.rs.)
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
backend=${1:-opencl}
ranks=${2:-2}
n=${3:-20}
shift $(($# < 3 ? $# : 3))
[[ ${1:-} == -- ]] && shift
features=${FEATURES:-mpi,opencl,cuda}

cargo build --release --features "$features" --example airfoil >&2
bin=${CARGO_TARGET_DIR:-target}/release/examples/airfoil
out=${CARGO_TARGET_DIR:-target}/device-halos
mkdir -p "$out"

# Runs airfoil ($1 iterations; the rest is the launcher and its environment)
# into $out/NAME.txt ($2 is NAME).
run() {
    local iterations=$1 name=$2
    shift 2
    "$@" "$bin" --backend "$backend" --iterations "$iterations" "${extra[@]}" > "$out/$name.txt" 2>&1 || {
        cat "$out/$name.txt" >&2
        echo "$name failed" >&2
        exit 1
    }
}
extra=("$@")
# ms/iteration of a run's output.
ms() { sed -n 's/.* (\([0-9.]*\) ms\/iteration).*/\1/p' "$1" | head -1; }
# Rank 0's MB over the bus in a run: whole copies, then halo records.
bus() {
    awk '/^transfers/ { t = 1; next } t && (NF < 5 || /^note:/) { t = 0 }
        t { whole += $3 + $5; if (NF >= 8) halo += $7 + $8 }
        END { printf "%.6f %.6f", whole, halo }' "$1"
}
# MB per iteration from runs of N and 2N iterations: "whole halo".
per_iteration() {
    read -r w1 h1 <<< "$(bus "$1")"
    read -r w2 h2 <<< "$(bus "$2")"
    awk -v n="$n" -v w1="$w1" -v h1="$h1" -v w2="$w2" -v h2="$h2" \
        'BEGIN { printf "%.4f %.4f", (w2 - w1) / n, (h2 - h1) / n }'
}

run "$n" one-rank env
for halos in on off; do
    run "$n" "mpi-$halos-n" env OP2_DEVICE_HALOS=$halos mpirun -n "$ranks"
    run $((2 * n)) "mpi-$halos-2n" env OP2_DEVICE_HALOS=$halos mpirun -n "$ranks"
done

printf '%-34s %12s %16s %16s\n' "airfoil on $backend, $n iterations" "ms/iter" "whole MB/iter" "halo MB/iter"
printf '%-34s %12s %16s %16s\n' "one rank" "$(ms "$out/one-rank.txt")" "-" "-"
for halos in on off; do
    read -r whole halo <<< "$(per_iteration "$out/mpi-$halos-n.txt" "$out/mpi-$halos-2n.txt")"
    printf '%-34s %12s %16s %16s\n' "mpirun -n $ranks, device halos $halos" "$(ms "$out/mpi-$halos-2n.txt")" "$whole" "$halo"
done
read -r won hon <<< "$(per_iteration "$out/mpi-on-n.txt" "$out/mpi-on-2n.txt")"
read -r woff hoff <<< "$(per_iteration "$out/mpi-off-n.txt" "$out/mpi-off-2n.txt")"
awk -v won="$won" -v hon="$hon" -v woff="$woff" -v hoff="$hoff" 'BEGIN {
    on = won + hon; off = woff + hoff
    if (on > 0) printf "bus bytes per iteration, host halos / device halos: %.1fx\n", off / on
    else printf "bus bytes per iteration with device halos: none (host halos: %.4f MB)\n", off
    if (on > 0) printf "halo records share of the bus with device halos: %.0f%%\n", 100 * hon / on
}'
