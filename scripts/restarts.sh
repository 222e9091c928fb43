#!/usr/bin/env bash
# Restarts of Circles and predator-prey (feature hdf5, under mpirun), against one rank's
# uninterrupted run, file for file (its --write, gathered in id order on
# any number of ranks: 3 ranks' is one rank's):
#
#   scripts/restarts.sh CIRCLES PREDATOR_PREY AIRFOIL [OUT]
#   # the examples' binaries, built with --features mpi,hdf5
#
# 1. a run on 4 ranks checkpoints every 10 steps; resumed from its step-30
#    checkpoint on 1, 2 and 3 ranks, each --write equals the whole run's;
# 2. the kill test: a run on 3 ranks checkpointing every 10 steps is killed
#    with SIGKILL at a random moment after a random checkpoint; resumed on
#    3 ranks from the newest checkpoint it left, it ends where the whole
#    run ends. Files cut short are refused by tests/checkpoint.rs;
# 3. predator-prey (births, deaths, random streams) checkpointed on 3 ranks
#    and resumed on 2 prints the whole run's lines from there on, writes
#    its CSV files (gathered in id order) and continues the VTK series;
# 4. Airfoil checkpointed on 1 and 2 ranks and resumed on as many prints
#    the uninterrupted run's rms lines from there on, digit for digit.
set -euo pipefail
usage="usage: scripts/restarts.sh CIRCLES PREDATOR_PREY AIRFOIL [OUT]"
circles=${1:?$usage}
pp=${2:?$usage}
airfoil=${3:?$usage}
out=${4:-target/restarts}
rm -rf "$out"
mkdir -p "$out"
args="--agents 4000 --backend seq"

echo "== restarts: 4 ranks checkpoint, 1 to 3 resume"
"$circles" $args --steps 60 --write "$out/whole.csv" > /dev/null 2>&1
mpirun -n 3 "$circles" $args --steps 60 --write "$out/three.csv" > /dev/null 2>&1
cmp "$out/whole.csv" "$out/three.csv" || { echo "restarts: --write on 3 ranks differs from one rank's" >&2; exit 1; }
mpirun -n 4 "$circles" $args --steps 60 --checkpoint "$out/four" --checkpoint-every 10 > /dev/null 2>&1
[ -f "$out/four/step_60.h5" ] && [ -f "$out/four/step_50.h5" ] && [ ! -e "$out/four/step_40.h5" ] \
    || { echo "restarts: --checkpoint-every kept other files than the last two" >&2; exit 1; }
mpirun -n 4 "$circles" $args --steps 30 --checkpoint "$out/four" --checkpoint-every 10 > /dev/null 2>&1
for n in 1 2 3; do
    mpirun -n "$n" "$circles" $args --steps 60 --resume "$out/four/step_30.h5" --write "$out/resumed-$n.csv" > /dev/null 2>&1
    cmp "$out/whole.csv" "$out/resumed-$n.csv" || { echo "restarts: resumed on $n ranks differs" >&2; exit 1; }
done

echo "== restarts: killed with SIGKILL, resumed"
steps=400
"$circles" $args --steps $steps --write "$out/long.csv" > /dev/null 2>&1
# A process group of its own, so that the kill reaches mpirun and every rank.
setsid mpirun -n 3 "$circles" $args --steps $steps --checkpoint "$out/kill" --checkpoint-every 10 \
    --write "$out/never.csv" > /dev/null 2>&1 &
run=$!
# The kill comes at a random moment after a random checkpoint (10 to 150)
# appears, long before the run's end whatever the machine's speed.
target=$((10 * (1 + RANDOM % 15)))
newest() { ls "$out/kill"/step_*.h5 2> /dev/null | sed 's/.*step_\([0-9]*\)\.h5/\1/' | sort -n | tail -n 1; }
until [ "$(newest)" -ge "$target" ] 2> /dev/null; do
    kill -0 "$run" 2> /dev/null || break
    sleep 0.02
done
sleep "$(awk -v r=$RANDOM 'BEGIN { print (r % 10) / 100 }')"
kill -KILL -- "-$run" 2> /dev/null || true
wait "$run" 2> /dev/null || true
latest=$(newest)
echo "killed after step $latest of $steps ($(ls "$out/kill" | tr '\n' ' '))"
# (On a machine fast enough to end the run before the kill, the resume
# below still checks the newest checkpoint; say so.)
if [ "$latest" -ge "$steps" ] || [ -e "$out/never.csv" ]; then
    echo "restarts: note: the run ended before the kill" >&2
fi
mpirun -n 3 "$circles" $args --steps $steps --resume "$out/kill/step_$latest.h5" --write "$out/after-kill.csv" > /dev/null 2>&1
cmp "$out/long.csv" "$out/after-kill.csv" || { echo "restarts: the run resumed after the kill differs" >&2; exit 1; }

echo "== restarts: predator-prey on 3 ranks, resumed on 2"
pp_args="--prey 3000 --predators 300 --steps 40 --size 80 --backend seq"
"$pp" $pp_args --csv "$out/pp-one" > "$out/pp-one.txt" 2> /dev/null
mpirun -n 3 "$pp" $pp_args --checkpoint "$out/pp" --checkpoint-every 10 --vtk "$out/pp-vtk" --every 10 > /dev/null 2>&1
mpirun -n 2 "$pp" $pp_args --resume "$out/pp/step_30.h5" --csv "$out/pp-resumed" \
    --vtk "$out/pp-vtk" --every 10 > "$out/pp-resumed.txt" 2> /dev/null
# The resumed run's VTK series goes on from the first run's: steps 0 to 40.
listed=$(grep -o 'file="prey_[0-9]*\.pvtp"' "$out/pp-vtk/prey.pvd" | tr -dc '0-9\n' | sed 's/^0*\([0-9]\)/\1/' | tr '\n' ' ')
[ "$listed" = "0 10 20 30 40 " ] || { echo "restarts: the resumed VTK series lists steps '$listed', not 0 to 40" >&2; exit 1; }
tail -n 11 "$out/pp-one.txt" | cmp - "$out/pp-resumed.txt" || { echo "restarts: predator-prey resumed prints other lines" >&2; exit 1; }
for f in prey.csv predators.csv; do
    cmp "$out/pp-one/$f" "$out/pp-resumed/$f" || { echo "restarts: predator-prey resumed writes another $f" >&2; exit 1; }
done

echo "== restarts: Airfoil on 1 and 2 ranks"
af_args="--mesh 120x80 --iterations 400 --backend seq"
for n in 1 2; do
    mpirun -n "$n" "$airfoil" $af_args | grep '^  [0-9]' > "$out/af-$n.txt"
    mpirun -n "$n" "$airfoil" ${af_args/--iterations 400/--iterations 250} --checkpoint "$out/af-$n" \
        --checkpoint-every 100 > /dev/null
    mpirun -n "$n" "$airfoil" --resume "$out/af-$n/step_200.h5" --iterations 400 --backend seq \
        --checkpoint "$out/af-$n" --checkpoint-every 100 | grep '^  [0-9]' > "$out/af-resumed-$n.txt"
    # The resumed run keeps the last two checkpoints, counting the earlier ones.
    [ "$(ls "$out/af-$n" | tr '\n' ' ')" = "step_300.h5 step_400.h5 " ] \
        || { echo "restarts: Airfoil resumed on $n ranks left $(ls "$out/af-$n" | tr '\n' ' ')" >&2; exit 1; }
    tail -n 2 "$out/af-$n.txt" | cmp - "$out/af-resumed-$n.txt" \
        || { echo "restarts: Airfoil resumed on $n ranks prints other rms lines" >&2; exit 1; }
done
# A grid file is not a checkpoint: refused, naming what it lacks.
"$airfoil" --mesh 20x10 --iterations 0 --write-grid "$out/grid.h5" > /dev/null
if "$airfoil" --resume "$out/grid.h5" --iterations 10 > "$out/af-not.txt" 2>&1 \
    || ! grep -q "not a checkpoint" "$out/af-not.txt"; then
    echo "restarts: Airfoil resumed from a grid file without refusing it" >&2
    exit 1
fi
echo "restarts: every resumed run ends where the whole run ends"
