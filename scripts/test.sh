#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, and runs every test.
# Golden tests read ../shared (or $CAFFE_SHARED_DIR) and skip, saying so, where it is absent.
# Then the sanitizer stages, and the GPU variant's tests on the CUDA emulator (docs/CUDA_EMU.md):
# every program with GPU code, the GPU paths executing on the host, and its GPU-against-CPU
# checks once more with the threads of each kernel run in reverse order. Where nvcc exists, the
# real GPU variant is also built and its GPU test programs run (they skip without a GPU).
# Each stage says how long it took (the README gives a cold run's figures).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS="${CAFFE_JOBS:-$(nproc)}"
# Idle OpenMP threads sleep rather than spin: ctest -j shares the cores between test programs
# (src/caffe/test/CMakeLists.txt says what spinning cost; this covers the tests added otherwise).
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
stage_start=$SECONDS
stage_done() {
  echo "test: $1 took $((SECONDS - stage_start)) s"
  stage_start=$SECONDS
}

scripts/install_deps.sh
# The CPU variant with every test program (the quickstart configures build/ without them), its
# library compiled file by file as users build it (the benchmarked code). The other stages build
# theirs several files to a unit (CAFFE_UNITY_BUILD, cmake/UnityBuild.cmake): about half the time.
scripts/build.sh -DCAFFE_CUDA=OFF -DCAFFE_BUILD_TESTS=ON
(cd build && ctest --output-on-failure -j "$JOBS")
stage_done "the CPU variant"

# The sanitizer stages (cmake/Sanitizers.cmake: the switch, the test programs each stage runs and
# why). Each builds the library, the tools and its test programs once more, instrumented, in a
# tree of its own (no Python: pycaffe's tests would run the instrumented module in an
# uninstrumented interpreter; no oneDNN: Caffe's own engine is the code to check), and runs them,
# each program as one test.
if [ "${CAFFE_SKIP_SANITIZERS:-0}" != 1 ]; then
  SANITIZER_BUILD=(-DCAFFE_TEST_SCOPE=sanitizer -DCAFFE_PYTHON=OFF -DCAFFE_DNNL=OFF
    -DCAFFE_UNITY_BUILD=ON)
  echo "test: AddressSanitizer + UBSan in build-asan/ (the core, LMS, DDL and data loading)"
  CAFFE_BUILD_DIR=build-asan scripts/build.sh -DCAFFE_SANITIZE=address,undefined \
    "${SANITIZER_BUILD[@]}"
  (cd build-asan && ctest --output-on-failure -j "$JOBS")
  stage_done "AddressSanitizer + UBSan"
  echo "test: ThreadSanitizer in build-tsan/ (DDL's communication thread, prefetch threads, LMS)"
  CAFFE_BUILD_DIR=build-tsan scripts/build.sh -DCAFFE_SANITIZE=thread "${SANITIZER_BUILD[@]}"
  (cd build-tsan && ctest --output-on-failure -j "$JOBS")
  stage_done "ThreadSanitizer"
fi

if [ "${CAFFE_SKIP_EMU_BUILD:-0}" != 1 ]; then
  echo "test: the GPU variant on the CUDA emulator in build-emu/ (its GPU cases, on the host)"
  # The test programs with GPU cases, each typed case for the GPU device only
  # (CAFFE_TEST_SCOPE=gpu): the CPU variant above ran the CPU cases. oneDNN and OpenCV are the
  # CPU build's business; pycaffe is built for its GPU paths (caffe.NCCL across processes,
  # set_lms on a GPU).
  CAFFE_BUILD_DIR=build-emu scripts/build.sh -DCAFFE_CUDA_EMU=ON -DCAFFE_DNNL=OFF \
    -DCAFFE_OPENCV=OFF -DCAFFE_PYTHON=ON -DCAFFE_TEST_SCOPE=gpu -DCAFFE_UNITY_BUILD=ON
  # Two emulated GPUs, so that multi-GPU training and GPU learners under mpirun use NCCL. The
  # finite-difference gradient checks on the GPU in double only: the kernels are the same
  # templates for float, whose GPU results the <Type>LayerGpuTest cases compare with the CPU's
  # (gradient-checked in float by the CPU variant); both types took 600 of the stage's 1,150 s.
  (cd build-emu && CAFFE_CUDA_EMU_DEVICES=2 ctest --output-on-failure -j "$JOBS" \
    -E "FiniteDifferences.*GPUDevice<float>")
  stage_done "the GPU variant on the emulator"
  # The tests of GPU kernels (GPU against CPU, forward and backward; cuDNN; fused groups) again
  # with each grid's blocks and threads run last first: a kernel whose results change with the
  # order its threads run in has a race on a GPU (docs/CUDA_EMU.md). Not the finite-difference
  # gradient checks: they run the same kernels as the GPU-against-CPU cases, a thousand times
  # more often (three quarters of the pass's time).
  echo "test: the GPU tests on the emulator again, each kernel's threads run in reverse order"
  (cd build-emu && CAFFE_CUDA_EMU_DEVICES=2 CAFFE_CUDA_EMU_ORDER=reverse \
    ctest --output-on-failure -j "$JOBS" -R "GPUDevice|Gpu|GPU|CuDNN|Fused|InPlace" \
    -E FiniteDifferences)
  stage_done "the reverse-order pass"
fi

NVCC="$(command -v nvcc || true)"
[ -z "$NVCC" ] && [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc
if [ -n "$NVCC" ] && [ "${CAFFE_SKIP_CUDA_BUILD:-0}" != 1 ]; then
  # Without a GPU the CUDA variant's own tests are the programs named for GPU code (which skip,
  # saying why), each program one test (each process spends 0.6 s loading cuDNN and cuBLAS): the
  # layers' GPU cases ran on the emulator above, and here would only skip. With a GPU, all of
  # them, each case in a process of its own.
  SCOPE=gpu_named
  PER_PROGRAM=ON
  if nvidia-smi -L > /dev/null 2>&1; then SCOPE=all PER_PROGRAM=OFF; fi
  echo "test: nvcc found ($NVCC): building the GPU variant in build-cuda/ (tests: $SCOPE)"
  mkdir -p build-cuda
  CAFFE_BUILD_DIR=build-cuda scripts/build.sh -DCAFFE_CUDA=ON -DCMAKE_CUDA_COMPILER="$NVCC" \
    -DCAFFE_TEST_SCOPE="$SCOPE" -DCAFFE_TEST_PER_PROGRAM="$PER_PROGRAM" -DCAFFE_UNITY_BUILD=ON \
    2>&1 | tee build-cuda/build.log
  # Our code compiles without warnings (g++: "file:line:col: warning", nvcc: "file(line): warning").
  OURS="(^|/)(src|include|tools|python|benchmarks)/[^ :(]+"
  if grep -E "$OURS(:[0-9]+:[0-9]+|\([0-9]+\)): warning" build-cuda/build.log | grep -v "^/usr/"; then
    echo "test: the GPU variant compiled with warnings from our code (above)" >&2
    exit 1
  fi
  (cd build-cuda && ctest --output-on-failure -j "$JOBS")
  stage_done "the nvcc variant"
fi
echo "test: all tests passed"
