#!/usr/bin/env sh
# Converts the CIFAR-10 binary batches (data/cifar10/get_cifar10.sh) into the LMDBs
# cifar10_train_lmdb and cifar10_test_lmdb beside this script, and computes the mean image of the
# training set (mean.binaryproto) that the CIFAR-10 nets subtract.
set -e
cd "$(dirname "$0")/../.."

EXAMPLE=examples/cifar10
DATA=data/cifar10
DBTYPE=lmdb
BUILD="${TOOLS:-build/bin}"

. examples/require_files.sh
require_files "run data/cifar10/get_cifar10.sh first" $DATA/data_batch_1.bin \
  $DATA/data_batch_2.bin $DATA/data_batch_3.bin $DATA/data_batch_4.bin $DATA/data_batch_5.bin \
  $DATA/test_batch.bin
require_files "build Caffe first (scripts/build.sh), or set TOOLS to its tools' folder" \
  "$BUILD"/convert_cifar_data "$BUILD"/compute_image_mean

echo "Creating $DBTYPE..."

rm -rf $EXAMPLE/cifar10_train_$DBTYPE $EXAMPLE/cifar10_test_$DBTYPE

"$BUILD"/convert_cifar_data $DATA $EXAMPLE $DBTYPE

echo "Computing image mean..."

"$BUILD"/compute_image_mean -backend=$DBTYPE \
  $EXAMPLE/cifar10_train_$DBTYPE $EXAMPLE/mean.binaryproto

echo "Done."
