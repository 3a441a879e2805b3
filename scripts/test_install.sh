#!/usr/bin/env bash
# The ctest `install_find_package`: installs a build as a user would install the library, then
# uses it from outside the checkout:
#   - `cmake --install BUILD --prefix P`, then P is moved elsewhere (the package is relocatable);
#   - every "caffe/..." header that an installed header includes is installed;
#   - the installed tools run from the prefix (libcaffe from P/lib, through $ORIGIN/../lib) and
#     make the example's inputs: convert_mnist_data turns drawn 28x28 images of ten classes (a
#     bright square in one of ten places, on noise) into LMDBs, compute_image_mean their mean,
#     `caffe train` a small LeNet on them (a few seconds), caffe_db dumps test records as PNGs;
#   - examples/cpp_classification, copied out of the tree, is configured with its CMakeLists.txt
#     (find_package(Caffe), Caffe::caffe), built, and classifies those PNGs: five labels with
#     probabilities, most probable first, the first one the record's label;
#   - `pkg-config --cflags --libs caffe` compiles, links and runs a program that loads the net.
# Usage: scripts/test_install.sh BUILD_DIR. Exits 77 (ctest: skipped), saying why, where the build
# cannot read images (no OpenCV) or python3 is missing.
set -euo pipefail

SOURCE="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="$(cd "${1:?usage: scripts/test_install.sh BUILD_DIR}" && pwd)"

fail() {
  echo "test_install: FAIL: $*" >&2
  exit 1
}

if ! ls "$BUILD"/lib/*caffe_image_opencv* > /dev/null 2>&1; then
  echo "test_install: skipped: this build cannot read images (built without OpenCV)"
  exit 77
fi
command -v python3 > /dev/null || { echo "test_install: skipped: python3 is missing"; exit 77; }

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
cmake --install "$BUILD" --prefix "$TMP/installed" > "$TMP/install.log" ||
  { cat "$TMP/install.log"; fail "cmake --install $BUILD failed"; }
PREFIX="$TMP/moved/prefix"
mkdir -p "$TMP/moved"
mv "$TMP/installed" "$PREFIX"

# The layout, and the headers' includes.
for path in bin/caffe bin/convert_mnist_data bin/compute_image_mean bin/caffe_db lib/libcaffe.so \
    include/caffe/caffe.hpp include/caffe/proto/caffe.pb.h lib/cmake/Caffe/CaffeConfig.cmake \
    lib/cmake/Caffe/CaffeConfigVersion.cmake lib/pkgconfig/caffe.pc; do
  [ -e "$PREFIX/$path" ] || fail "the install has no $path"
done
[ ! -e "$PREFIX/include/caffe/test" ] || fail "the tests' helper headers were installed"
missing="$(cd "$PREFIX/include" && grep -rhoE '^#include "caffe/[^"]+"' caffe |
  sed 's/^#include "//; s/"$//' | sort -u | while read -r header; do
    [ -f "$header" ] || echo "$header"
  done)"
[ -z "$missing" ] || fail "installed headers include headers that are not installed: $missing"

# The tools run from the prefix, on its libcaffe.
libcaffe="$(ldd "$PREFIX/bin/caffe" | awk '$1 ~ /^libcaffe\.so/ {print $3}')"
[ -n "$libcaffe" ] && [ "$(realpath "$libcaffe")" = "$(realpath "$PREFIX/lib/libcaffe.so")" ] ||
  fail "the installed caffe loads libcaffe from '$libcaffe', not from $PREFIX/lib"

# Ten classes of 28x28 gray images (class k: a bright 7x7 square at one of ten places), as MNIST
# idx files; mean.txt gets their mean pixel, which training subtracts as the example does.
DATA="$TMP/data"
mkdir -p "$DATA"
python3 - "$DATA" <<'EOF'
import random, struct, sys
out = sys.argv[1]
rng = random.Random(7)
def draw(k):
    pixels = [rng.randrange(0, 60) for _ in range(28 * 28)]
    top = 2 + 9 * (k // 4) + rng.randrange(-1, 2)
    left = 1 + 7 * (k % 4) + (2 if k >= 8 else 0) + rng.randrange(0, 2)
    for y in range(top, top + 7):
        for x in range(left, left + 7):
            pixels[28 * y + x] = rng.randrange(200, 256)
    return pixels
total = 0
for name, count in (("train", 1000), ("test", 20)):
    labels = [i % 10 for i in range(count)]
    images = [draw(k) for k in labels]
    with open(f"{out}/{name}-images-idx3-ubyte", "wb") as f:
        f.write(struct.pack(">IIII", 2051, count, 28, 28))
        for image in images:
            f.write(bytes(image))
    with open(f"{out}/{name}-labels-idx1-ubyte", "wb") as f:
        f.write(struct.pack(">II", 2049, count) + bytes(labels))
    if name == "train":
        total = sum(sum(image) for image in images) / (count * 28 * 28)
with open(f"{out}/mean.txt", "w") as f:
    f.write(f"{total:.4f}\n")
EOF
cd "$DATA"
for set in train test; do
  "$PREFIX/bin/convert_mnist_data" $set-images-idx3-ubyte $set-labels-idx1-ubyte ${set}_lmdb \
    > $set.log 2>&1 || { cat $set.log; fail "convert_mnist_data ($set) failed"; }
done
"$PREFIX/bin/compute_image_mean" train_lmdb mean.binaryproto > mean.log 2>&1 ||
  { cat mean.log; fail "compute_image_mean failed"; }
for k in 0 1 2 3 4 5 6 7 8 9; do
  echo "n0$k square in place $k"
done > labels.txt

# A small LeNet; the deploy net takes the image less the mean, as the example gives it.
lenet_body() {
  cat <<'EOF'
layer { name: "scale" type: "Power" bottom: "data" top: "scaled" power_param { scale: 0.00390625 } }
layer { name: "conv1" type: "Convolution" bottom: "scaled" top: "conv1"
  convolution_param { num_output: 8 kernel_size: 5 weight_filler { type: "xavier" } } }
layer { name: "pool1" type: "Pooling" bottom: "conv1" top: "pool1"
  pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layer { name: "conv2" type: "Convolution" bottom: "pool1" top: "conv2"
  convolution_param { num_output: 16 kernel_size: 5 weight_filler { type: "xavier" } } }
layer { name: "pool2" type: "Pooling" bottom: "conv2" top: "pool2"
  pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layer { name: "ip1" type: "InnerProduct" bottom: "pool2" top: "ip1"
  inner_product_param { num_output: 64 weight_filler { type: "xavier" } } }
layer { name: "relu1" type: "ReLU" bottom: "ip1" top: "ip1" }
layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2"
  inner_product_param { num_output: 10 weight_filler { type: "xavier" } } }
EOF
}
{
  echo "name: \"LeNet\" layer { name: \"data\" type: \"Data\" top: \"data\" top: \"label\""
  echo "  transform_param { mean_value: $(cat mean.txt) }"
  echo "  data_param { source: \"train_lmdb\" batch_size: 50 backend: LMDB } }"
  lenet_body
  echo 'layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip2" bottom: "label" top: "loss" }'
} > train.prototxt
{
  echo 'name: "LeNet" layer { name: "data" type: "Input" top: "data"'
  echo '  input_param { shape { dim: 1 dim: 1 dim: 28 dim: 28 } } }'
  lenet_body
  echo 'layer { name: "prob" type: "Softmax" bottom: "ip2" top: "prob" }'
} > deploy.prototxt
cat > solver.prototxt <<'EOF'
net: "train.prototxt"
base_lr: 0.01 momentum: 0.9 weight_decay: 0.0005 lr_policy: "fixed"
max_iter: 200 display: 100 random_seed: 1 snapshot_prefix: "lenet" solver_mode: CPU
EOF
"$PREFIX/bin/caffe" train -solver solver.prototxt > train.log 2>&1 ||
  { cat train.log; fail "caffe train (installed) failed"; }
[ -f lenet_iter_200.caffemodel ] || { cat train.log; fail "training wrote no caffemodel"; }

# The example, built out of the tree against the installed package.
cp -r "$SOURCE/examples/cpp_classification" "$TMP/example"
launcher=()
if command -v ccache > /dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$TMP"  # the same sources and headers hit the cache from any $TMP
fi
cmake -S "$TMP/example" -B "$TMP/example-build" -DCMAKE_PREFIX_PATH="$PREFIX" "${launcher[@]}" \
  > "$TMP/example-configure.log" 2>&1 ||
  { cat "$TMP/example-configure.log"; fail "configuring examples/cpp_classification failed"; }
cmake --build "$TMP/example-build" > "$TMP/example-build.log" 2>&1 ||
  { cat "$TMP/example-build.log"; fail "building examples/cpp_classification failed"; }
classify="$TMP/example-build/classification"

line_form='^[01]\.[0-9]{4} - "n0[0-9] square in place [0-9]"$'
for record in 3 14 19; do
  dump="$("$PREFIX/bin/caffe_db" dump test_lmdb $record digit$record.png 2> dump.log)" ||
    { cat dump.log; fail "caffe_db dump failed"; }
  label="$(sed -n "s/.*, label \([0-9]*\).*/\1/p" <<< "$dump")"
  [ -n "$label" ] || fail "caffe_db dump printed no label: $dump"
  "$classify" deploy.prototxt lenet_iter_200.caffemodel mean.binaryproto labels.txt \
    digit$record.png > classify.out 2> classify.err ||
    { cat classify.err; fail "classification of digit$record.png failed"; }
  echo "digit$record.png (label $label):"
  cat classify.out
  [ "$(sed -n 1p classify.out)" = "---------- Prediction for digit$record.png ----------" ] ||
    fail "the first line is not the prediction header"
  [ "$(sed -n '2,$p' classify.out | grep -cE "$line_form")" = 5 ] &&
    [ "$(wc -l < classify.out)" = 6 ] || fail "expected five lines 'P.PPPP - \"label\"'"
  sed -n '2,$p' classify.out | cut -d' ' -f1 | sort -rnc ||
    fail "the probabilities are not in decreasing order"
  top="$(sed -n 2p classify.out)"
  [[ "$top" == *"\"n0$label square in place $label\"" ]] ||
    fail "digit$record.png has label $label, but the most probable is: $top"
  awk -v p="${top%% *}" 'BEGIN { exit !(p > 0.5) }' ||
    fail "the most probable label of digit$record.png has only ${top%% *}"
done

# pkg-config: the same library with the flags of caffe.pc.
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
flags="$(pkg-config --cflags --libs caffe)" || fail "pkg-config --cflags --libs caffe failed"
[[ " $flags " == *" -I$PREFIX/lib/pkgconfig/../../include "* && " $flags " == *" -lcaffe "* ]] ||
  fail "pkg-config gave no -I for $PREFIX/include or no -lcaffe: $flags"
cat > "$TMP/load_net.cpp" <<'EOF'
// Loads a net and its weights through the installed headers and libcaffe; prints its output.
#include <caffe/caffe.hpp>
#include <iostream>

int main(int argc, char** argv) {
  caffe::Net<float> net(argv[1], caffe::TEST);
  net.CopyTrainedLayersFrom(argv[2]);
  net.Forward();
  std::cout << net.name() << " " << net.output_blobs()[0]->shape_string() << std::endl;
  return 0;
}
EOF
# shellcheck disable=SC2086  # the flags are words
${launcher:+ccache} c++ -std=c++17 "$TMP/load_net.cpp" -o "$TMP/load_net" $flags 2> "$TMP/pc.log" ||
  { cat "$TMP/pc.log"; fail "a program built with pkg-config's flags for caffe did not build"; }
"$TMP/load_net" deploy.prototxt lenet_iter_200.caffemodel > load_net.out 2> load_net.err ||
  { cat load_net.err; fail "the program built with pkg-config's flags failed"; }
grep -qx "LeNet 1 10 (10)" load_net.out || fail "load_net printed '$(cat load_net.out)'"
echo "test_install: OK (installed, moved, example built with find_package(Caffe) and pkg-config)"
