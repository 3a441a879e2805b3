#!/usr/bin/env sh
# Computes the mean image of the ImageNet training LMDB (create_imagenet.sh) into
# data/ilsvrc12/imagenet_mean.binaryproto, which the CaffeNet and AlexNet nets subtract.
# N.B. this is also available in data/ilsvrc12 (get_ilsvrc_aux.sh)
set -e
cd "$(dirname "$0")/../.."

EXAMPLE=examples/imagenet
DATA=data/ilsvrc12
TOOLS="${TOOLS:-build/bin}"

"$TOOLS"/compute_image_mean $EXAMPLE/ilsvrc12_train_lmdb \
  $DATA/imagenet_mean.binaryproto

echo "Done."
