#!/usr/bin/env sh
# Trains LeNet on MNIST with RMSProp (after create_mnist.sh); extra flags go to caffe train.
set -e
cd "$(dirname "$0")/../.."
./build/bin/caffe train --solver=examples/mnist/lenet_solver_rmsprop.prototxt "$@"
