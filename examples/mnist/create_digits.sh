#!/usr/bin/env sh
# Converts the bundled digits (data/digits/get_digits.sh: 1500 training and 297 test images in
# MNIST's idx format) into LMDBs for lenet_digits_train_test.prototxt.
set -e
cd "$(dirname "$0")/../.."

EXAMPLE=examples/mnist
DATA=data/digits
BUILD="${TOOLS:-build/bin}"
BACKEND="lmdb"

. examples/require_files.sh
require_files "run data/digits/get_digits.sh first" $DATA/train-images-idx3-ubyte \
  $DATA/train-labels-idx1-ubyte $DATA/t10k-images-idx3-ubyte $DATA/t10k-labels-idx1-ubyte
require_files "build Caffe first (scripts/build.sh), or set TOOLS to its tools' folder" \
  "$BUILD"/convert_mnist_data

echo "Creating ${BACKEND}..."
rm -rf $EXAMPLE/digits_train_${BACKEND} $EXAMPLE/digits_test_${BACKEND}
"$BUILD"/convert_mnist_data $DATA/train-images-idx3-ubyte \
  $DATA/train-labels-idx1-ubyte $EXAMPLE/digits_train_${BACKEND} --backend=${BACKEND}
"$BUILD"/convert_mnist_data $DATA/t10k-images-idx3-ubyte \
  $DATA/t10k-labels-idx1-ubyte $EXAMPLE/digits_test_${BACKEND} --backend=${BACKEND}
echo "Done."
