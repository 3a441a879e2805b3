#!/usr/bin/env sh
# Trains LeNet on MNIST with RMSProp (after create_mnist.sh); extra flags go to caffe train.
set -e
cd "$(dirname "$0")/../.."
CAFFE_BIN="${CAFFE_BIN:-${TOOLS:-./build/bin}/caffe}"
"$CAFFE_BIN" train --solver=examples/mnist/lenet_solver_rmsprop.prototxt "$@"
