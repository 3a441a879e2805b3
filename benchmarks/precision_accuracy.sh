#!/usr/bin/env bash
# What bf16 arithmetic costs in accuracy (docs/PRECISION.md): LeNet (examples/mnist/
# lenet_digits_solver.prototxt, 2000 steps) and the residual net with BatchNorm
# (examples/mnist/digits_resnet_solver.prototxt, 1000 steps) on the bundled digits, trained with
# -precision fp32 and -precision bf16 from the same seed (random_seed in the solver: the same
# initial weights and data order). Prints each run's final test accuracy and bf16's difference
# from fp32's in percentage points.
#
#   examples/mnist/create_digits.sh && benchmarks/precision_accuracy.sh [SEEDS...]
#
# CAFFE_BIN or TOOLS: the tool (default build/bin/caffe).
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=("$@")
[ ${#seeds[@]} -gt 0 ] || seeds=(1 2 3)
CAFFE_BIN="${CAFFE_BIN:-${TOOLS:-build/bin}/caffe}"
WORK="$(mktemp -d /tmp/precision_accuracy.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT

# final_accuracy SOLVER SEED PRECISION: the last "Test net output #0: accuracy" of the run.
final_accuracy() {
  sed -e "s|^solver_mode: .*|solver_mode: CPU|" -e "s|^snapshot_prefix: .*|snapshot_prefix: \"$WORK/run\"|" \
    "$1" > "$WORK/solver.prototxt"
  echo "random_seed: $2" >> "$WORK/solver.prototxt"
  "$CAFFE_BIN" train -solver "$WORK/solver.prototxt" -precision "$3" > "$WORK/log" 2>&1 ||
    { tail -5 "$WORK/log" >&2; exit 1; }
  grep "Test net output #0: accuracy" "$WORK/log" | tail -1 | sed 's/.*accuracy = //'
}

printf '%-13s %-5s %-9s %-9s %s\n' net seed fp32 bf16 "bf16 - fp32 (points)"
for net in lenet:examples/mnist/lenet_digits_solver.prototxt \
           digits_resnet:examples/mnist/digits_resnet_solver.prototxt; do
  for seed in "${seeds[@]}"; do
    fp32="$(final_accuracy "${net#*:}" "$seed" fp32)"
    bf16="$(final_accuracy "${net#*:}" "$seed" bf16)"
    printf '%-13s %-5s %-9s %-9s %s\n' "${net%%:*}" "$seed" "$fp32" "$bf16" \
      "$(awk -v a="$bf16" -v b="$fp32" 'BEGIN { printf "%+.2f", 100 * (a - b) }')"
  done
done
