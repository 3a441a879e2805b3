#!/usr/bin/env bash
# What -ddl "-compress fp16|bf16" costs in accuracy: LeNet on the bundled digits as 2 learners
# (examples/ddl's schedule: 1000 steps at batch 64 each), for each seed with no compression, fp16
# and bf16, every run from the same initial weights and data order (random_seed in the solver).
# Prints each run's final test accuracy (3 x 100 test digits) and how far its final weights are
# from the uncompressed run of the same seed (the largest relative difference over the blobs).
#
#   examples/mnist/create_digits.sh && benchmarks/comm/compression_accuracy.sh [SEEDS...]
#
# CAFFE_BIN or TOOLS: the tool (default build/bin/caffe); PYTHON: a python3 that imports this
# build's pycaffe (default /usr/bin/python3 with PYTHONPATH=build/python).
set -euo pipefail
cd "$(dirname "$0")/../.."
seeds=("$@")
[ ${#seeds[@]} -gt 0 ] || seeds=(1 2 3)
WORK="$(mktemp -d /tmp/compression_accuracy.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
PYTHON="${PYTHON:-/usr/bin/python3}"
export PYTHONPATH="${PYTHONPATH:-$PWD/build/python}"
# shellcheck source=examples/ddl/ddl_train.sh
. examples/ddl/ddl_train.sh

# Largest relative difference between two caffemodels' blobs (max |a - b| / max |b| per blob).
weights_difference() {
  "$PYTHON" tools/extra/compare_caffemodels.py "$1" "$2" |
    sed 's/^largest relative difference: //; s/ (.*//'
}

printf '%-5s %-12s %-9s %s\n' seed compression accuracy "weights vs none"
for seed in "${seeds[@]}"; do
  for compression in none fp16 bf16; do
    solver="$WORK/s${seed}_$compression.prototxt"
    sed -e "s|^snapshot_prefix:.*|snapshot_prefix: \"$WORK/s${seed}_$compression\"|" \
      examples/ddl/lenet_digits_ddl_solver.prototxt > "$solver"
    echo "random_seed: $seed" >> "$solver"
    log="$WORK/s${seed}_$compression.log"
    (DDL_OPTIONS="-compress $compression" ddl_train "$solver" -n 2) > "$log" 2>&1 ||
      { tail -20 "$log" >&2; exit 1; }
    accuracy="$(sed -n 's/.*Test net output #0: accuracy = //p' "$log" | tail -n 1)"
    model="$(find "$WORK" -name "s${seed}_${compression}_iter_*.caffemodel" | sort -V | tail -n 1)"
    difference="-"
    if [ "$compression" != none ]; then
      difference="$(weights_difference "$model" "$WORK/s${seed}_none_iter_${model##*_iter_}")"
    fi
    printf '%-5s %-12s %-9s %s\n' "$seed" "$compression" "$accuracy" "$difference"
  done
done
