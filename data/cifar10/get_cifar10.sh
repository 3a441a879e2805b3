#!/usr/bin/env bash
# Downloads the CIFAR-10 dataset, binary version (http://www.cs.toronto.edu/~kriz/cifar.html), and
# unpacks it into this folder: data_batch_1.bin ... data_batch_5.bin, test_batch.bin (10000 images
# of 3073 bytes each) and batches.meta.txt. Files already present are kept; each batch is checked
# for its exact size. CIFAR10_URL=<url> fetches the same archive from another location.
set -euo pipefail

DIR="$(cd "$(dirname "$0")" && pwd -P)"
. "$DIR/../download_lib.sh"
URL="${CIFAR10_URL:-http://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz}"
BATCHES=(data_batch_1.bin data_batch_2.bin data_batch_3.bin data_batch_4.bin data_batch_5.bin
         test_batch.bin)
BATCH_BYTES=30730000

cd "$DIR"
missing=0
for batch in "${BATCHES[@]}"; do [ -e "$batch" ] || missing=1; done
if [ "$missing" -eq 0 ]; then
  echo "The CIFAR-10 batches are already here."
else
  echo "Downloading..."
  fetch "$URL" cifar-10-binary.tar.gz "no internet access? fetch cifar-10-binary.tar.gz by hand \
into $DIR and unpack it there with: tar -xzf cifar-10-binary.tar.gz --strip-components=1, or \
set CIFAR10_URL to a mirror"
  echo "Unzipping..."
  unpack cifar-10-binary.tar.gz "$URL" --strip-components=1
fi
for batch in "${BATCHES[@]}"; do
  check_size "$batch" "$BATCH_BYTES"
done
echo "Done."
