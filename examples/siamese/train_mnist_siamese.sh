#!/usr/bin/env sh
# Trains the siamese LeNet on MNIST pairs (after create_mnist_siamese.sh); extra flags go to
# caffe train.
set -e
cd "$(dirname "$0")/../.."
CAFFE_BIN="${CAFFE_BIN:-${TOOLS:-./build/bin}/caffe}"
"$CAFFE_BIN" train --solver=examples/siamese/mnist_siamese_solver.prototxt "$@"
