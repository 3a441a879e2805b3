#!/usr/bin/env sh
# Trains the MNIST autoencoder with AdaGrad (after create_mnist.sh); extra flags go to caffe train.
set -e
cd "$(dirname "$0")/../.."
CAFFE_BIN="${CAFFE_BIN:-${TOOLS:-./build/bin}/caffe}"
"$CAFFE_BIN" train --solver=examples/mnist/mnist_autoencoder_solver_adagrad.prototxt "$@"
