#!/usr/bin/env bash
# Prepares, on this machine (no GPU needed), everything scripts/gpu_verify.sh needs on the GPU
# machine, in the gitignored bundle/ folder that the device tool carries (64 MiB at most):
#   bundle/gpu.tar.xz      the GPU build (build-gpu: CUDA, MPI and NCCL; no oneDNN/OpenCV/Python) with
#                          every test program (scripts/make_bundle.sh --tests)
#   bundle/*-ubyte         the bundled digits, for LeNet
#   bundle/shared.tar.xz   ../shared's benchmark nets, reference prototxts and as many golden
#                          fixtures as fit (the golden tests compare the GPU with BVLC too)
#   bundle/nets/           ResNet-50 (train_val with an Input layer) at batch 64, for `time`
#   bundle/proto/          caffe_pb2.py, for benchmarks/torch_from_prototxt.py there (PyTorch's
#                          side of `time`; that machine has no protoc)
# and last runs the bundle's tests here as they run there (scripts/check_bundle.sh).
#
#   scripts/gpu_prepare.sh            # then: run with carry ["bundle"], scripts/gpu_verify.sh ...
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED="${CAFFE_SHARED_DIR:-../shared}"
# The carry limit is 64 MiB for the working tree and bundle/ together; 1 MiB to spare.
TREE_BYTES=$(git ls-files -z | xargs -0 du -cb | tail -1 | cut -f1)
LIMIT_BYTES=$((63 * 1024 * 1024 - TREE_BYTES))

CAFFE_BUILD_DIR=build-gpu scripts/build.sh -DCAFFE_CUDA=ON -DCAFFE_DNNL=OFF \
    -DCAFFE_OPENCV=OFF -DCAFFE_PYTHON=OFF -DCAFFE_MPI=ON -DCAFFE_TEST_SCOPE=all
mkdir -p bundle/nets
scripts/make_bundle.sh --build build-gpu --tests --out bundle/gpu.tar.xz
cp data/digits/*-ubyte bundle/

# ResNet-50 at batch 64 with an Input layer, from models/resnet50 (as benchmarks/cpu.sh makes it).
PROTO_PY="$(mktemp -d)"
trap 'rm -rf "$PROTO_PY"' EXIT
protoc --proto_path=src/caffe/proto --python_out="$PROTO_PY" src/caffe/proto/caffe.proto
mkdir -p bundle/proto
cp "$PROTO_PY/caffe_pb2.py" bundle/proto/
/usr/bin/python3 benchmarks/torch_from_prototxt.py input-net --proto-dir "$PROTO_PY" \
    --model models/resnet50/train_val.prototxt --shape 64,3,224,224 \
    > bundle/nets/resnet50_trainval_b64.prototxt

# The shared files, the golden folders smallest first while the whole bundle stays in the limit.
if [ -d "$SHARED/fixtures/golden" ]; then
  used=$(du -cb bundle/gpu.tar.xz bundle/*-ubyte bundle/nets bundle/proto | tail -1 | cut -f1)
  items=(benchmarks/nets reference fixtures/golden/README.txt)
  for folder in $(cd "$SHARED" && du -sb fixtures/golden/*/ | sort -n | cut -f2); do
    candidate=("${items[@]}" "${folder%/}")
    tar -C "$SHARED" -cJf bundle/shared.tar.xz "${candidate[@]}"
    size=$(stat -c %s bundle/shared.tar.xz)
    [ $((used + size)) -le $LIMIT_BYTES ] || break
    items=("${candidate[@]}")
  done
  tar -C "$SHARED" -cJf bundle/shared.tar.xz "${items[@]}"
  echo "gpu_prepare: bundle/shared.tar.xz holds ${items[*]}"
else
  echo "gpu_prepare: no $SHARED/fixtures: the golden tests will skip on the GPU machine" >&2
fi
du -ch bundle/* | tail -1
# The bundle's tests here as gpu_verify.sh runs them there (relocated; the GPU cases skip), so a
# file the bundle lacks shows now rather than in a GPU session.
scripts/check_bundle.sh bundle/gpu.tar.xz build-gpu | grep -v '^PASS ' ||
  { echo "gpu_prepare: the bundle's tests fail here (logs: /tmp/check_bundle_logs)" >&2; exit 1; }
