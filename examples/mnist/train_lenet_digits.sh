#!/usr/bin/env sh
# Trains LeNet on the bundled digits (after create_digits.sh); extra flags go to caffe train.
set -e
cd "$(dirname "$0")/../.."
CAFFE_BIN="${CAFFE_BIN:-${TOOLS:-./build/bin}/caffe}"
"$CAFFE_BIN" train --solver=examples/mnist/lenet_digits_solver.prototxt "$@"
