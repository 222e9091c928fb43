#!/usr/bin/env bash
# Airfoil on this machine's cores, every figure of the CPU targets in one
# table: per thread count, op2-rs on rayon and jit with each host schedule
# (partitions, the default, and the plan's block colours), rayon's best over
# jit's best, OP2-Common's own OpenMP Airfoil on as many threads (when a
# bundle of it is at hand) and op2-rs's best over it, and the bandwidth
# floor (the iteration's bytes over a STREAM triad on as many threads) with
# the fraction of it the best run reached. Beside the floor, the loops'
# arithmetic: the same run on a mesh that fits in half the last-level cache,
# its time scaled up by the cells (what an iteration costs when memory is not
# what limits it); where that is above the floor, the loops are bound by
# their instructions, and the last column is the fraction of the larger of
# the two. Then, on the most threads, the renumbered mesh (--renumber)
# against the plain one, and rayon on a team of its own (--threads) against
# its default, the process's shared team (RAYON_NUM_THREADS, no --threads).
#
#   scripts/host_figures.sh [AIRFOIL]
#
# AIRFOIL: the airfoil example built with jit (default
# target/release/examples/airfoil: `cargo build --release --features jit
# --example airfoil`); without jit built in (or a C compiler), rayon only.
# Times are ms per iteration after the first (its plans and compiles are
# one-off), the best of the rounds, which run interleaved.
#
# Environment (all optional):
#   THREADS     thread counts (default 1 2 4 8 16, those up to the cores here)
#   ROUNDS      rounds (default 2)
#   ITERATIONS  iterations per run (default 100)
#   MESH        mesh, IxJ (default 400x600: 720 000 cells)
#   RENUMBER    0 leaves out the renumbering table (default 1)
#   SHARED      0 leaves out the own team against the shared one (default 1)
#   OP2_BUNDLE  a bundle of OP2's classic Airfoil made by the team's
#               op2_airfoil.sh (default target/op2-bundle); its OpenMP binary
#               is built first when missing (BUILD_ONLY=1 build_and_run.sh "" cpu)
#
# scripts/gpu_bundle.sh carries this script: on the GPU machine's host cores,
# `bash run.sh host` runs it.
set -euo pipefail
status=0
airfoil=${1:-target/release/examples/airfoil}
# The CPUs this process may run on (nproc alone would follow OMP_NUM_THREADS).
cores=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
threads=${THREADS:-$(for t in 1 2 4 8 16; do if [ "$t" -le "$cores" ]; then echo "$t"; fi; done)}
rounds=${ROUNDS:-2}
iterations=${ITERATIONS:-100}
mesh=${MESH:-400x600}
op2_bundle=${OP2_BUNDLE:-target/op2-bundle}
[ -x "$airfoil" ] || { echo "host_figures: no airfoil binary at $airfoil (see the header)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

backends=rayon
if "$airfoil" --backend jit --mesh 2x2 --iterations 1 > /dev/null 2>&1; then
    backends="rayon jit"
else
    echo "host_figures: jit is not built into $airfoil (or no C compiler): rayon only"
fi

# OP2's OpenMP Airfoil, built when the bundle has none yet.
op2_app=$op2_bundle/OP2-Common/apps/c/airfoil/airfoil_plain/dp_classic
op2=""
if [ -f "$op2_bundle/build_and_run.sh" ]; then
    if [ ! -x "$op2_app/airfoil_openmp" ]; then
        echo "host_figures: building OP2's OpenMP Airfoil"
        BUILD_ONLY=1 bash "$op2_bundle/build_and_run.sh" "" cpu > "$work/op2-build.log" 2>&1 ||
            tail -n 20 "$work/op2-build.log"
    fi
    if [ -x "$op2_app/airfoil_openmp" ]; then
        op2=$(cd "$op2_app" && pwd)/airfoil_openmp
        mkdir -p "$work/grid"
        "$airfoil" --mesh "$mesh" --iterations 0 --backend seq --write-grid "$work/grid/new_grid.dat" > /dev/null ||
            { status=1; op2=""; echo "host_figures: could not write the grid for OP2" >&2; }
    fi
else
    echo "host_figures: no OP2 bundle at $op2_bundle: op2-rs alone"
fi

# The cache-resident mesh: Airfoil holds about 170 bytes per cell (its Dats
# and maps); the mesh keeps 400x600's shape (2:3, 3 I J cells) and fills half
# of one instance of the last-level cache (threads spread over several
# instances have more), else 120x180 where lscpu can't say; at most half the
# full mesh's cells.
cells() { awk -v m="$1" 'BEGIN { split(m, d, "x"); print 3 * d[1] * d[2] }'; }
llc=$({ lscpu -B -C=NAME,ONE-SIZE 2>/dev/null || true; } | awk '$1 ~ /^L[0-9]$/ { size = $2 } END { print size + 0 }')
cache_mesh=$(awk -v llc="$llc" -v full="$(cells "$mesh")" 'BEGIN {
    n = (llc > 0) ? llc / 2 / 170 : 64800
    if (n > full / 2) n = full / 2
    i = int(sqrt(n / 3 / 1.5)); if (i < 2) i = 2
    printf "%dx%d\n", i, int(1.5 * i) }')
scale=$(awk -v a="$(cells "$mesh")" -v b="$(cells "$cache_mesh")" 'BEGIN { printf "%.6f", a / b }')
# As much work as the full mesh's run, and at least 100 iterations.
cache_iterations=$(awk -v n="$iterations" -v s="$scale" 'BEGIN { k = int(n * s); print (k < 100) ? 100 : k }')

# ms per iteration after the first, from a run's output.
steady_ms() { grep -oE '^after the first iteration[^:]*: [0-9.]+' "$1" | grep -oE '[0-9.]+$'; }
# The smaller of two numbers, either of which may be empty.
min() { awk -v a="${1:-}" -v b="${2:-}" 'BEGIN { if (a == "") print b; else if (b == "" || a + 0 <= b + 0) print a; else print b }'; }
# The larger of two numbers, either of which may be empty.
max() { awk -v a="${1:-}" -v b="${2:-}" 'BEGIN { if (a == "") print b; else if (b == "" || a + 0 >= b + 0) print a; else print b }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "-"; else printf "%.2f", a / b }'; }
# OP2's loop seconds for N iterations on T threads ("Max total runtime").
op2_seconds() {
    (cd "$work/grid" && NITER=$1 OMP_NUM_THREADS=$2 "$op2") | grep -oE 'Max total runtime = *[0-9.]+' | grep -oE '[0-9.]+$'
}

declare -A best floor
for round in $(seq "$rounds"); do
    for t in $threads; do
        for backend in $backends; do
            for schedule in partitions colours; do
                log=$work/$backend-$schedule-$t-$round.log
                extra=""
                # A triad per thread count and round (the machine's best
                # bandwidth counts: the floor is then the lowest).
                [ "$backend" = rayon ] && [ "$schedule" = partitions ] && extra=--floor
                if OP2_HOST_SCHEDULE=$schedule "$airfoil" --backend "$backend" --threads "$t" --mesh "$mesh" \
                    --iterations "$iterations" $extra > "$log" 2>&1; then
                    key=$backend-$schedule-$t
                    best[$key]=$(min "${best[$key]:-}" "$(steady_ms "$log")")
                    if [ -n "$extra" ]; then
                        floor[$t]=$(min "${floor[$t]:-}" "$(grep -oE '[0-9.]+ ms/iteration at that bandwidth' "$log" | grep -oE '^[0-9.]+')")
                        triad=$(grep -oE 'streams [0-9.]+ GB/s' "$log" | grep -oE '[0-9.]+' || true)
                        floor[triad-$t]=$(awk -v a="${floor[triad-$t]:-}" -v b="$triad" 'BEGIN { print (b + 0 > a + 0) ? b : a }')
                    fi
                else
                    status=1
                    echo "host_figures: $backend $schedule on $t threads failed:" >&2
                    tail -n 5 "$log" >&2
                fi
            done
        done
        # The best backend's arithmetic: its default schedule on the cache-resident mesh.
        for backend in $backends; do
            log=$work/cache-$backend-$t-$round.log
            if "$airfoil" --backend "$backend" --threads "$t" --mesh "$cache_mesh" \
                --iterations "$cache_iterations" > "$log" 2>&1; then
                best[cache-$t]=$(min "${best[cache-$t]:-}" "$(awk -v ms="$(steady_ms "$log")" -v s="$scale" 'BEGIN { printf "%.3f", ms * s }')")
            else
                status=1
                echo "host_figures: $backend on the cache-resident mesh ($cache_mesh) on $t threads failed:" >&2
                tail -n 5 "$log" >&2
            fi
        done
        if [ -n "$op2" ]; then
            # Two lengths: their difference is iterations without OP2's one-off plans.
            few=$(op2_seconds 10 "$t") && more=$(op2_seconds 50 "$t") &&
                best[op2-$t]=$(min "${best[op2-$t]:-}" "$(awk -v a="$few" -v b="$more" 'BEGIN { printf "%.3f", 1e3 * (b - a) / 40 }')") ||
                { status=1; echo "host_figures: OP2's OpenMP Airfoil failed on $t threads" >&2; }
        fi
    done
done

echo "Airfoil $mesh on $cores cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), ms/iteration after the first, best of $rounds rounds of $iterations iterations"
echo
echo "| threads | rayon | rayon colours | jit | jit colours | rayon / jit | OP2 OpenMP | best / OP2 OpenMP | triad GB/s | floor ms | best: fraction of floor | in cache ms ($cache_mesh, x$(printf %.2f "$scale")) | best: fraction of the larger |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for t in $threads; do
    rayon=$(min "${best[rayon-partitions-$t]:-}" "${best[rayon-colours-$t]:-}")
    jit=$(min "${best[jit-partitions-$t]:-}" "${best[jit-colours-$t]:-}")
    all=$(min "$rayon" "$jit")
    echo "| $t | ${best[rayon-partitions-$t]:--} | ${best[rayon-colours-$t]:--} | ${best[jit-partitions-$t]:--} |" \
        "${best[jit-colours-$t]:--} | $(ratio "$rayon" "$jit") | ${best[op2-$t]:--} | $(ratio "$all" "${best[op2-$t]:-}") |" \
        "${floor[triad-$t]:--} | ${floor[$t]:--} | $(ratio "${floor[$t]:-}" "$all") |" \
        "${best[cache-$t]:--} | $(ratio "$(max "${floor[$t]:-}" "${best[cache-$t]:-}")" "$all") |"
done

# Renumbering, and rayon's own team against the shared one, on the most threads.
t=$(echo "$threads" | tr ' ' '\n' | sort -n | tail -1)
if [ "${RENUMBER:-1}" != 0 ]; then
    echo
    echo "| $t threads, partitions | plain | --renumber | renumbered / plain |"
    echo "|---|---|---|---|"
    for backend in $backends; do
        for renumber in "" --renumber; do
            log=$work/renumber-$backend-${renumber:-plain}.log
            "$airfoil" --backend "$backend" --threads "$t" --mesh "$mesh" --iterations "$iterations" $renumber > "$log" 2>&1 ||
                { status=1; tail -n 5 "$log" >&2; }
        done
        plain=$(steady_ms "$work/renumber-$backend-plain.log" || true)
        renumbered=$(steady_ms "$work/renumber-$backend---renumber.log" || true)
        echo "| $backend | ${plain:--} | ${renumbered:--} | $(ratio "$renumbered" "$plain") |"
    done
fi
if [ "${SHARED:-1}" != 0 ]; then
    # --threads gives rayon a team of its own (the caller and t - 1 threads
    # that stay awake between phases); without it rayon runs on the
    # process's shared team, sized by RAYON_NUM_THREADS: they should be level.
    for round in $(seq "$rounds"); do
        for how in own shared; do
            log=$work/threads-$how-$round.log
            if [ "$how" = own ]; then
                "$airfoil" --backend rayon --threads "$t" --mesh "$mesh" --iterations "$iterations" > "$log" 2>&1
            else
                RAYON_NUM_THREADS=$t "$airfoil" --backend rayon --mesh "$mesh" --iterations "$iterations" > "$log" 2>&1
            fi || { status=1; tail -n 5 "$log" >&2; continue; }
            best[$how]=$(min "${best[$how]:-}" "$(steady_ms "$log")")
        done
    done
    echo
    echo "| $t threads, rayon | a team of its own (--threads $t) | the shared team (RAYON_NUM_THREADS=$t) | own / shared |"
    echo "|---|---|---|---|"
    echo "| partitions | ${best[own]:--} | ${best[shared]:--} | $(ratio "${best[own]:-}" "${best[shared]:-}") |"
fi
exit $status
