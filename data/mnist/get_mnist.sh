#!/usr/bin/env bash
# Downloads the MNIST dataset (http://yann.lecun.com/exdb/mnist/) into this folder and gunzips it:
# train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte.
# Files already present are kept. Each file is checked for its exact size after unpacking.
# MNIST_URL=<base URL> uses another location holding the same four .gz files.
set -euo pipefail

DIR="$(cd "$(dirname "$0")" && pwd -P)"
. "$DIR/../download_lib.sh"
BASE_URL="${MNIST_URL:-http://yann.lecun.com/exdb/mnist}"

# name and size in bytes after gunzip (idx header + items)
FILES=(
  "train-images-idx3-ubyte 47040016"
  "train-labels-idx1-ubyte 60008"
  "t10k-images-idx3-ubyte 7840016"
  "t10k-labels-idx1-ubyte 10008"
)

cd "$DIR"
echo "Downloading..."
for entry in "${FILES[@]}"; do
  read -r name size <<< "$entry"
  if [ -e "$name" ]; then
    echo "$name is already here."
  else
    fetch "$BASE_URL/$name.gz" "$name.gz" "no internet access? the site may also refuse scripted \
downloads: fetch the four .gz files by hand into $DIR and gunzip them, or set MNIST_URL to a mirror"
    if ! gunzip -c "$name.gz" > "$name.part"; then
      rm -f "$name.gz" "$name.part"
      fail "$BASE_URL/$name.gz is not a valid gzip file (an error page instead of the data?)"
    fi
    rm -f "$name.gz"
    mv "$name.part" "$name"
  fi
  check_size "$name" "$size"
done
echo "Done."
