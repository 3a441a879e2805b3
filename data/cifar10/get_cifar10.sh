#!/usr/bin/env bash
# Downloads the CIFAR-10 dataset, binary version (http://www.cs.toronto.edu/~kriz/cifar.html), and
# unpacks it into this folder: data_batch_1.bin ... data_batch_5.bin, test_batch.bin (10000 images
# of 3073 bytes each) and batches.meta.txt. Files already present are kept; each batch is checked
# for its exact size. CIFAR10_URL=<url> fetches the same archive from another location.
set -euo pipefail

DIR="$(cd "$(dirname "$0")" && pwd -P)"
URL="${CIFAR10_URL:-http://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz}"
BATCHES=(data_batch_1.bin data_batch_2.bin data_batch_3.bin data_batch_4.bin data_batch_5.bin
         test_batch.bin)
BATCH_BYTES=30730000

fail() {
  echo "get_cifar10.sh: $*" >&2
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
missing=0
for batch in "${BATCHES[@]}"; do [ -e "$batch" ] || missing=1; done
if [ "$missing" -eq 0 ]; then
  echo "The CIFAR-10 batches are already here."
else
  echo "Downloading..."
  rm -f cifar-10-binary.tar.gz.part
  if ! download "$URL" cifar-10-binary.tar.gz.part; then
    rm -f cifar-10-binary.tar.gz.part
    fail "could not download $URL (no internet access? fetch cifar-10-binary.tar.gz by hand \
into $DIR and unpack it there with: tar -xzf cifar-10-binary.tar.gz --strip-components=1, or \
set CIFAR10_URL to a mirror)"
  fi
  echo "Unzipping..."
  if ! tar -xzf cifar-10-binary.tar.gz.part --strip-components=1; then
    rm -f cifar-10-binary.tar.gz.part
    fail "$URL is not a valid .tar.gz archive (an error page instead of the data?)"
  fi
  rm -f cifar-10-binary.tar.gz.part
fi
for batch in "${BATCHES[@]}"; do
  [ -e "$batch" ] || fail "$DIR/$batch is missing after unpacking"
  actual="$(wc -c < "$batch")"
  [ "$actual" -eq "$BATCH_BYTES" ] || fail "$DIR/$batch has $actual bytes, expected \
$BATCH_BYTES: remove it and run this script again"
done
echo "Done."
