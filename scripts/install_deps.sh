#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages Caffe builds, tests and trains with. Safe to run again: it
# refreshes the package lists, then installs only what is missing.
#   scripts/install_deps.sh               # everything: scripts/test.sh, CI, every optional part
#   scripts/install_deps.sh --quickstart  # only what scripts/quickstart.sh needs: the library and
#                                         # tools (CPU, oneDNN), python3 for the digits
set -euo pipefail

# What the library and the tools are built with (cmake/Dependencies.cmake's required libraries,
# and oneDNN, the CPU engine for Convolution), and python3 for data/digits/get_digits.sh.
QUICKSTART_PACKAGES=(
  build-essential cmake pkg-config
  protobuf-compiler libprotobuf-dev
  libgoogle-glog-dev libgflags-dev
  liblmdb-dev
  libhdf5-dev
  libopenblas-openmp-dev
  libdnnl-dev                 # oneDNN: the fast CPU convolution engine
  python3
)
# The rest: the optional parts, the tests and the tools around them.
MORE_PACKAGES=(
  ccache git
  lmdb-utils
  libleveldb-dev              # backend: LEVELDB (BVLC's default data_param backend)
  libopencv-core-dev libopencv-imgproc-dev libopencv-imgcodecs-dev
  libopenmpi-dev openmpi-bin  # DDL (caffe train -ddl) and its mpi tests
  iproute2                    # ip netns, tc: benchmarks/comm/netns_cluster.sh
  libgtest-dev
  # pycaffe (python/): build, tests (golden blobs via h5py), draw_net.py and plot_training_log.py
  python3-dev python3-numpy pybind11-dev python3-protobuf python3-pytest python3-h5py
  python3-matplotlib graphviz
  # the web server (scripts/web.sh, web/): Flask, Chart.js served locally, process and LMDB
  # readers, images; its browser tests drive Debian's chromium through chromium-driver
  python3-flask libjs-chart.js python3-psutil python3-lmdb python3-pil
  chromium chromium-driver python3-selenium
  time
  clang-format                # scripts/format.sh (the ctest `format` checks the sources)
  patchelf xz-utils           # scripts/make_bundle.sh: relocatable bundles (GPU machines)
)

case "${1:-}" in
  "") PACKAGES=("${QUICKSTART_PACKAGES[@]}" "${MORE_PACKAGES[@]}") ;;
  --quickstart) PACKAGES=("${QUICKSTART_PACKAGES[@]}") ;;
  *) echo "install_deps: unknown option '$1' (expected none, or --quickstart)" >&2; exit 2 ;;
esac

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for package in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

echo "install_deps: refreshing package lists (apt-get update)"
$SUDO apt-get update -qq
if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi
echo "install_deps: installing ${missing[*]}"
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  "${missing[@]}"
