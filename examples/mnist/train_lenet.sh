#!/usr/bin/env sh
# Trains LeNet on MNIST (after data/mnist/get_mnist.sh and examples/mnist/create_mnist.sh).
set -e
cd "$(dirname "$0")/../.."
CAFFE_BIN="${CAFFE_BIN:-${TOOLS:-./build/bin}/caffe}"
"$CAFFE_BIN" train --solver=examples/mnist/lenet_solver.prototxt "$@"
