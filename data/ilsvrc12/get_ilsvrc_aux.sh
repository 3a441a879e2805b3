#!/usr/bin/env bash
# Downloads the auxiliary files of the ImageNet (ILSVRC 2012) example into this folder (not the
# images themselves, which come from http://www.image-net.org/download-images):
#   train.txt, val.txt, test.txt   image lists with labels, for convert_imageset
#   synsets.txt, synset_words.txt  the class ids and their names, in label order
#   det_synset_words.txt           the detection challenge's classes
#   imagenet_mean.binaryproto      the mean image of the training set (256 x 256)
#   imagenet.bet.pickle            the ImageNet graph for hierarchical evaluation
# ILSVRC_AUX_URL=<url> fetches the same archive from another location.
set -euo pipefail

DIR="$(cd "$(dirname "$0")" && pwd -P)"
. "$DIR/../download_lib.sh"
URL="${ILSVRC_AUX_URL:-http://dl.caffe.berkeleyvision.org/caffe_ilsvrc12.tar.gz}"

cd "$DIR"
if [ -e synset_words.txt ] && [ -e train.txt ] && [ -e val.txt ] && \
   [ -e imagenet_mean.binaryproto ]; then
  echo "The ILSVRC12 auxiliary files are already here."
  exit 0
fi
echo "Downloading..."
fetch "$URL" caffe_ilsvrc12.tar.gz "no internet access? fetch caffe_ilsvrc12.tar.gz by hand into \
$DIR and unpack it there with tar -xzf, or set ILSVRC_AUX_URL to a mirror"
echo "Unzipping..."
unpack caffe_ilsvrc12.tar.gz "$URL"
for file in synsets.txt synset_words.txt train.txt val.txt imagenet_mean.binaryproto; do
  [ -e "$file" ] || fail "$DIR/$file is missing after unpacking"
done
echo "Done."
