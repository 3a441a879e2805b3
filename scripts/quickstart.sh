#!/usr/bin/env bash
# The README's first command: installs the packages it needs, builds the library and the two
# tools it runs (not the test programs: scripts/test.sh builds those), fetches the bundled
# handwritten digits, and trains BVLC's LeNet on them with BVLC's lenet_solver settings, ending
# with the test accuracy. On a machine with a GPU and nvcc (scripts/gpu_toolchain.sh) it builds
# the GPU variant and trains on the GPU, as BVLC's default build did; else on the CPU. The
# training log is kept in examples/mnist/lenet_digits_train.log.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "quickstart: the packages it needs (scripts/install_deps.sh --quickstart)"
scripts/install_deps.sh --quickstart
echo "quickstart: building libcaffe, caffe and convert_mnist_data in build/"
scripts/build.sh -DCAFFE_BUILD_TESTS=OFF --target caffe.bin --target convert_mnist_data.bin
echo "quickstart: the bundled digits (data/digits), as LMDBs in examples/mnist"
data/digits/get_digits.sh
examples/mnist/create_digits.sh

# The GPU when this build and machine can use one (device_query fails otherwise), else the CPU.
DEVICE=(-gpu 0)
WHERE="GPU 0"
if ! build/bin/caffe device_query -gpu 0 > /dev/null 2>&1; then
  DEVICE=()
  WHERE="the CPU"
fi
echo "quickstart: training LeNet on $WHERE"
LOG=examples/mnist/lenet_digits_train.log
examples/mnist/train_lenet_digits.sh "${DEVICE[@]}" 2>&1 | tee "$LOG"
echo
echo "quickstart: final test accuracy (LeNet on $WHERE, 2000 iterations, 297 held-out digits):"
grep "Test net output #0: accuracy" "$LOG" | tail -1 | sed 's/.*accuracy = /  accuracy = /'
