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
URL="${ILSVRC_AUX_URL:-http://dl.caffe.berkeleyvision.org/caffe_ilsvrc12.tar.gz}"

fail() {
  echo "get_ilsvrc_aux.sh: $*" >&2
  exit 1
}

download() {
  local url="$1" out="$2"
  if command -v wget > /dev/null; then
    wget --no-verbose -O "$out" "$url"
  elif command -v curl > /dev/null; then
    curl --fail --location --silent --show-error -o "$out" "$url"
  else
    fail "neither wget nor curl is installed"
  fi
}

cd "$DIR"
if [ -e synset_words.txt ] && [ -e train.txt ] && [ -e val.txt ] && \
   [ -e imagenet_mean.binaryproto ]; then
  echo "The ILSVRC12 auxiliary files are already here."
  exit 0
fi
echo "Downloading..."
rm -f caffe_ilsvrc12.tar.gz.part
if ! download "$URL" caffe_ilsvrc12.tar.gz.part; then
  rm -f caffe_ilsvrc12.tar.gz.part
  fail "could not download $URL (no internet access? fetch caffe_ilsvrc12.tar.gz by hand into \
$DIR and unpack it there with tar -xzf, or set ILSVRC_AUX_URL to a mirror)"
fi
echo "Unzipping..."
if ! tar -xzf caffe_ilsvrc12.tar.gz.part; then
  rm -f caffe_ilsvrc12.tar.gz.part
  fail "$URL is not a valid .tar.gz archive (an error page instead of the data?)"
fi
rm -f caffe_ilsvrc12.tar.gz.part
for file in synsets.txt synset_words.txt train.txt val.txt imagenet_mean.binaryproto; do
  [ -e "$file" ] || fail "$DIR/$file is missing after unpacking"
done
echo "Done."
