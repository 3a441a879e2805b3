#!/usr/bin/env sh
# Creates the ImageNet LMDBs examples/imagenet/ilsvrc12_train_lmdb and ilsvrc12_val_lmdb from the
# image folders and the lists data/ilsvrc12/train.txt and val.txt (data/ilsvrc12/get_ilsvrc_aux.sh).
# N.B. set the paths to the ImageNet train and val folders below, or in the environment:
#   TRAIN_DATA_ROOT=/data/imagenet/train/ VAL_DATA_ROOT=/data/imagenet/val/ RESIZE=true \
#     examples/imagenet/create_imagenet.sh
# ENCODED=true stores the images as JPEG bytes (about 10x smaller; decoded while training).
set -e
cd "$(dirname "$0")/../.."

EXAMPLE=examples/imagenet
DATA=data/ilsvrc12
TOOLS="${TOOLS:-build/bin}"

TRAIN_DATA_ROOT="${TRAIN_DATA_ROOT:-/path/to/imagenet/train/}"
VAL_DATA_ROOT="${VAL_DATA_ROOT:-/path/to/imagenet/val/}"

# Set RESIZE=true to resize the images to 256x256. Leave as false if images have
# already been resized using another tool.
RESIZE="${RESIZE:-false}"
if $RESIZE; then
  RESIZE_HEIGHT=256
  RESIZE_WIDTH=256
else
  RESIZE_HEIGHT=0
  RESIZE_WIDTH=0
fi
ENCODED="${ENCODED:-false}"

if [ ! -d "$TRAIN_DATA_ROOT" ]; then
  echo "Error: TRAIN_DATA_ROOT is not a path to a directory: $TRAIN_DATA_ROOT"
  echo "Set the TRAIN_DATA_ROOT variable in create_imagenet.sh to the path" \
       "where the ImageNet training data is stored."
  exit 1
fi

if [ ! -d "$VAL_DATA_ROOT" ]; then
  echo "Error: VAL_DATA_ROOT is not a path to a directory: $VAL_DATA_ROOT"
  echo "Set the VAL_DATA_ROOT variable in create_imagenet.sh to the path" \
       "where the ImageNet validation data is stored."
  exit 1
fi

echo "Creating train lmdb..."

GLOG_logtostderr=1 "$TOOLS"/convert_imageset \
    --resize_height=$RESIZE_HEIGHT \
    --resize_width=$RESIZE_WIDTH \
    --encoded=$ENCODED \
    --shuffle \
    "$TRAIN_DATA_ROOT" \
    $DATA/train.txt \
    $EXAMPLE/ilsvrc12_train_lmdb

echo "Creating val lmdb..."

GLOG_logtostderr=1 "$TOOLS"/convert_imageset \
    --resize_height=$RESIZE_HEIGHT \
    --resize_width=$RESIZE_WIDTH \
    --encoded=$ENCODED \
    --shuffle \
    "$VAL_DATA_ROOT" \
    $DATA/val.txt \
    $EXAMPLE/ilsvrc12_val_lmdb

echo "Done."
