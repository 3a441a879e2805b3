#!/usr/bin/env bash
# Training speed with denormal floats computed as zeros (the default) and as IEEE denormals
# (CAFFE_FLUSH_DENORMALS=0), iteration by iteration: a net fed an Input layer's zeros, as
# ../shared/benchmarks/nets has them, drifts into denormals within a few iterations of SGD.
#
#   benchmarks/denormals.sh [-i iterations] [-d display] [net]
#
# net: a name from ../shared/benchmarks/nets or a prototxt path; default CaffeNet train_val b10.
# Prints each setting's "Iteration N (X iter/s, ...)" lines from caffe train.
set -euo pipefail
cd "$(dirname "$0")/.."

ITERATIONS=24
DISPLAY=8
while getopts "i:d:" option; do
  case "$option" in
    i) ITERATIONS="$OPTARG" ;;
    d) DISPLAY="$OPTARG" ;;
    *) echo "usage: $0 [-i iterations] [-d display] [net]" >&2; exit 1 ;;
  esac
done
shift $((OPTIND - 1))
NET="${1:-bvlc_reference_caffenet_trainval_b10}"
SHARED="${CAFFE_SHARED_DIR:-../shared}"
[ -f "$NET" ] || NET="$SHARED/benchmarks/nets/$NET.prototxt"
[ -f "$NET" ] || { echo "denormals.sh: no net '$NET'" >&2; exit 1; }
CAFFE="${CAFFE_BUILD_DIR:-build}/bin/caffe"
[ -x "$CAFFE" ] || { echo "$CAFFE not found: run scripts/build.sh first" >&2; exit 1; }

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
# BVLC's CaffeNet solver settings (momentum and weight decay) on the given net.
cat > "$WORK/solver.prototxt" <<SOLVER
net: "$(readlink -f "$NET")"
base_lr: 0.001
lr_policy: "fixed"
momentum: 0.9
weight_decay: 0.0005
max_iter: $ITERATIONS
display: $DISPLAY
snapshot_after_train: false
solver_mode: CPU
SOLVER
for flush in 1 0; do
  echo "CAFFE_FLUSH_DENORMALS=$flush:"
  CAFFE_FLUSH_DENORMALS=$flush "$CAFFE" train -solver "$WORK/solver.prototxt" 2>&1 |
    grep -E "solver.cpp.*Iteration [0-9]+ \(" | sed 's/.*\] /  /'
done
echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(date +%F)"
