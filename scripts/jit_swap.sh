#!/usr/bin/env bash
# Times hand-edited C in place of jit's generated code for one loop: compiles
# FILE.c as jit compiles (OP2_CC, OP2_CFLAGS, else jit's defaults, and -lm) and writes
# it over OBJECT, a compiled loop in jit's cache, sealed as the cache seals
# its objects (its bytes, then "op2-obj2" and their SHA-256). An object
# swapped in without the seal is taken for a damaged one and rebuilt from
# the generated code, silently: the run would time the original.
#
#   OP2_CACHE_DIR=/tmp/try target/release/examples/airfoil --backend jit --iterations 1
#   cp /tmp/try/op2_res_calc_<key>.c try.c       # edit try.c
#   scripts/jit_swap.sh /tmp/try/op2_res_calc_<key>.so try.c
#   OP2_CACHE_DIR=/tmp/try target/release/examples/airfoil --backend jit   # runs try.c
#
# To go back, delete OBJECT: the next run builds the generated code again.
# Keep experiments in a cache of their own (OP2_CACHE_DIR): another run
# sharing it would run the swapped code too.
set -euo pipefail
[ $# = 2 ] || { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
object=$1 source=$2
case $(basename "$object") in
    op2_*.so) ;;
    *) echo "jit_swap: $object is not a compiled loop of jit's cache (op2_<loop>_<key>.so)" >&2; exit 2 ;;
esac
[ -f "$object" ] || { echo "jit_swap: no $object: run the loop once with this OP2_CACHE_DIR first" >&2; exit 2; }
[ -f "$source" ] || { echo "jit_swap: no $source" >&2; exit 2; }
command -v python3 > /dev/null || { echo "jit_swap: needs python3 (to seal the object with its SHA-256)" >&2; exit 2; }
cc=${OP2_CC:-cc}
# The default flags: op2-backends/src/config.rs, DEFAULT_CFLAGS.
cflags=${OP2_CFLAGS:--O3 -march=native -fopenmp -ffp-contract=off -fno-math-errno}
built=$(mktemp "${object}.XXXXXX")
trap 'rm -f "$built"' EXIT
# shellcheck disable=SC2086 # the flags are words
"$cc" $cflags -shared -fPIC -o "$built" "$source" -lm
python3 - "$built" <<'SEAL'
import hashlib, sys
path = sys.argv[1]
body = open(path, "rb").read()
open(path, "ab").write(b"op2-obj2" + hashlib.sha256(body).digest())
SEAL
mv "$built" "$object"
trap - EXIT
echo "jit_swap: $object now runs $source"
