#!/usr/bin/env sh
# Trains the MNIST autoencoder with Nesterov's momentum (after create_mnist.sh); extra flags
# go to caffe train.
set -e
cd "$(dirname "$0")/../.."
./build/bin/caffe train --solver=examples/mnist/mnist_autoencoder_solver_nesterov.prototxt "$@"
