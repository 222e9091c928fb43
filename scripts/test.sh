#!/usr/bin/env bash
# The whole test suite on a fresh Debian/Ubuntu machine, in one command:
# sets up what the optional features need (scripts/setup.sh), runs every test
# with every feature, then the distributed tests again under mpirun on 1, 2,
# 3 and 4 ranks. (`cargo test --workspace`, without features, needs only
# Rust and a C compiler.)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh

# The compile-error cases (tests/ui.rs, one test named `ui`) do not depend
# on features: they run once, without them, so trybuild builds op2 the way
# a plain `cargo test` (CI's first step) already did.
cargo test --workspace --features "$OP2_FEATURES" -- --skip ui --exact
cargo test --test ui

# More ranks than cores is fine for correctness. OP2_EXPECTED_RANKS makes the
# test fail if MPI's world is not what mpirun was asked for.
mpi_test=$(cargo test --features "$OP2_FEATURES" --test mpi --no-run 2>&1 | sed -n 's/.*Executable tests\/mpi.rs (\(.*\))/\1/p')
[ -x "$mpi_test" ] || { echo "cannot find the mpi test binary" >&2; exit 1; }
for n in 1 2 3 4; do
    echo "mpirun -n $n $mpi_test"
    OP2_EXPECTED_RANKS=$n mpirun -n "$n" "$mpi_test" --test-threads=1
done
