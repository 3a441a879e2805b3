#!/usr/bin/env sh
# Trains LeNet on MNIST from a solver that holds the net itself and tests it on both the
# training and the test set (after create_mnist.sh); extra flags go to caffe train.
set -e
cd "$(dirname "$0")/../.."
CAFFE_BIN="${CAFFE_BIN:-${TOOLS:-./build/bin}/caffe}"
"$CAFFE_BIN" train --solver=examples/mnist/lenet_consolidated_solver.prototxt "$@"
