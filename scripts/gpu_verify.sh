#!/usr/bin/env bash
# Verifies the GPU build on a machine with a GPU but none of our Debian packages (the H200 that
# some sessions are lent; docs/GPU_STATUS.md says how to prepare and what to record). Run from
# the repository root there, with the bundle made here by
#   CAFFE_BUILD_DIR=build-gpu scripts/build.sh -DCAFFE_CUDA=ON -DCAFFE_DNNL=OFF \
#       -DCAFFE_OPENCV=OFF -DCAFFE_PYTHON=OFF -DCAFFE_MPI=OFF
#   scripts/make_bundle.sh --build build-gpu --tests --out bundle/gpu.tar.xz
#   cp data/digits/*-ubyte bundle/     # the digits for LeNet (git ignores them)
# and carried as bundle/. Steps: tests [programs...] (alone), or any of lenet, time, lms.
#   scripts/gpu_verify.sh tests                       # every test program of the bundle
#   scripts/gpu_verify.sh tests test_gpu_math_functions test_relu_layer
#   scripts/gpu_verify.sh lenet time lms
# Logs and summaries go to $OUT (or gpu_verify_out/).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
OUT="${OUT:-$ROOT/gpu_verify_out}"
mkdir -p "$OUT"
BUNDLE_DIR=/tmp/caffe-bundle

# The test programs look for the sources, tools and shared fixtures where they were built
# (/work/main, /work/main/build-gpu/bin, /work/shared): recreate those paths here.
setup() {
  if [ ! -d "$BUNDLE_DIR" ]; then
    tar -xJf bundle/gpu.tar.xz -C /tmp || { echo "gpu_verify: bundle/gpu.tar.xz missing" >&2; exit 1; }
  fi
  mkdir -p /work
  [ "$ROOT" = /work/main ] || ln -sfn "$ROOT" /work/main
  ln -sfn "$BUNDLE_DIR" "$ROOT/build-gpu"
  [ -d bundle/shared ] && [ ! -e /work/shared ] && ln -sfn "$ROOT/bundle/shared" /work/shared
  # shellcheck disable=SC1091
  source "$BUNDLE_DIR/env.sh"
  nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
  caffe device_query -gpu 0 > "$OUT/device_query.txt" 2>&1
}

run_tests() {
  LOG_DIR=/tmp/test_logs "$BUNDLE_DIR/run_tests.sh" "$@" 2>&1 | tee "$OUT/tests.txt"
  tar -C /tmp -czf "$OUT/test_logs.tar.gz" test_logs
}

run_lenet() {
  for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte \
      t10k-labels-idx1-ubyte; do
    [ -s "data/digits/$f" ] || cp "bundle/$f" data/digits/
  done
  rm -rf examples/mnist/digits_train_lmdb examples/mnist/digits_test_lmdb
  convert_mnist_data data/digits/train-images-idx3-ubyte data/digits/train-labels-idx1-ubyte \
      examples/mnist/digits_train_lmdb --backend=lmdb > /dev/null 2>&1
  convert_mnist_data data/digits/t10k-images-idx3-ubyte data/digits/t10k-labels-idx1-ubyte \
      examples/mnist/digits_test_lmdb --backend=lmdb > /dev/null 2>&1
  /usr/bin/time -v caffe train --solver=examples/mnist/lenet_digits_solver.prototxt -gpu 0 \
      > "$OUT/lenet_gpu.log" 2>&1
  grep "Test net output #0: accuracy" "$OUT/lenet_gpu.log" | tail -1
}

run_time() {
  # caffe time forward-backward at the batches issue 5 names, with our default engines (cuDNN).
  # Nets: bundle/nets/<name>.prototxt if there (e.g. ResNet-50 made here with
  # benchmarks/torch_from_prototxt.py input-net), else /work/shared/benchmarks/nets/.
  local nets=(bvlc_reference_caffenet_trainval_b10:256 bvlc_alexnet_trainval_b10:256
              bvlc_googlenet_trainval_b10:128 resnet50_trainval_b64:64)
  for entry in "${nets[@]}"; do
    local name="${entry%%:*}" batch="${entry##*:}"
    local model="bundle/nets/$name.prototxt"
    [ -f "$model" ] || model="/work/shared/benchmarks/nets/$name.prototxt"
    [ -f "$model" ] || { echo "gpu_verify: no $name.prototxt" | tee -a "$OUT/time.txt"; continue; }
    # The first dim is the Input's batch.
    sed "0,/dim: [0-9]*/s//dim: $batch/" "$model" > "/tmp/${name}_$batch.prototxt"
    caffe time -model "/tmp/${name}_$batch.prototxt" -gpu 0 -iterations 20 \
        > "$OUT/time_$name.log" 2>&1
    echo "$name at batch $batch: $(grep 'Average Forward-Backward' "$OUT/time_$name.log" | tail -1)" \
        | tee -a "$OUT/time.txt"
  done
}

run_lms() {
  # Issue 6, must-show 2 (the seed case of ANCHORS.md): BVLC GoogLeNet's deploy net with a
  # 10x3x1200x1200 input, about 15.9 GB of blobs. Under a 16 GB budget it must fail with the clear
  # out-of-memory error without LMS and complete with -lms 8192 and with a large threshold; the run
  # without a budget is the reference. Each run's exit code, averages and [LMS] lines go to lms.txt.
  local model=/tmp/googlenet_1200.prototxt
  sed 's/dim: 224 dim: 224/dim: 1200 dim: 1200/' models/bvlc_googlenet/deploy.prototxt > "$model"
  grep -q "dim: 1200 dim: 1200" "$model" ||
    { echo "gpu_verify: no 224x224 input in the GoogLeNet deploy net" >&2; return 1; }
  local runs=("none:" "budget:-gpu_mem_limit 16G" "lms8192:-gpu_mem_limit 16G -lms 8192"
              "lms_large:-gpu_mem_limit 16G -lms 160000000")
  for entry in "${runs[@]}"; do
    local name="${entry%%:*}" flags="${entry#*:}"
    # shellcheck disable=SC2086
    caffe time -model "$model" -gpu 0 -iterations 3 $flags > "$OUT/lms_$name.log" 2>&1
    local code=$?
    {
      echo "== $name ($flags): exit code $code"
      grep -E "Average (Forward|Backward) pass|Average Forward-Backward|\[LMS\]|out of GPU memory" \
          "$OUT/lms_$name.log" | sed 's/^[IWE][0-9]* [0-9:.]* *[0-9]* [a-z_.]*:[0-9]*\] //' | head -20
    } | tee -a "$OUT/lms.txt"
  done
}

setup
step="${1:-tests}"
if [ "$step" = tests ]; then
  shift
  run_tests "$@"
  exit
fi
for step in "$@"; do
  case "$step" in
    lenet) run_lenet ;;
    time) run_time ;;
    lms) run_lms ;;
    *) echo "gpu_verify: unknown step '$step' (tests [programs], or lenet, time, lms)" >&2; exit 2 ;;
  esac
done
