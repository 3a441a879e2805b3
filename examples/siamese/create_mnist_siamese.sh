#!/usr/bin/env sh
# Converts the MNIST idx files (data/mnist/get_mnist.sh) into databases of image pairs for
# mnist_siamese_train_test.prototxt. DATA=data/digits uses the bundled digits instead.
set -e
cd "$(dirname "$0")/../.."

EXAMPLES=./build/examples/siamese
DATA=${DATA:-./data/mnist}

. examples/require_files.sh
require_files "run data/mnist/get_mnist.sh first (or set DATA=data/digits)" \
  $DATA/train-images-idx3-ubyte $DATA/train-labels-idx1-ubyte $DATA/t10k-images-idx3-ubyte \
  $DATA/t10k-labels-idx1-ubyte
require_files "build Caffe first: scripts/build.sh" $EXAMPLES/convert_mnist_siamese_data.bin

echo "Creating leveldb..."

rm -rf ./examples/siamese/mnist_siamese_train_leveldb
rm -rf ./examples/siamese/mnist_siamese_test_leveldb

$EXAMPLES/convert_mnist_siamese_data.bin \
    $DATA/train-images-idx3-ubyte \
    $DATA/train-labels-idx1-ubyte \
    ./examples/siamese/mnist_siamese_train_leveldb
$EXAMPLES/convert_mnist_siamese_data.bin \
    $DATA/t10k-images-idx3-ubyte \
    $DATA/t10k-labels-idx1-ubyte \
    ./examples/siamese/mnist_siamese_test_leveldb

echo "Done."
