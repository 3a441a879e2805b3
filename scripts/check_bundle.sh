#!/usr/bin/env bash
# Runs the test programs of a bundle made with --tests here as scripts/gpu_verify.sh runs them on
# the GPU machine: unpacked in another folder, with the build folder they were built in (whose
# paths they have compiled in) replaced by the bundle through a bind mount in a private mount
# namespace. So a test that needs a file of the build that the bundle lacks fails here, before a
# GPU session spends its minutes on it. The GPU cases skip (no GPU here). gpu_prepare.sh runs it
# last. Exit status: run_tests.sh's (the number of failed runs); 0 with a SKIP line where mount
# namespaces are not allowed.
#
#   scripts/check_bundle.sh [BUNDLE [BUILD_DIR]]   # defaults: bundle/gpu.tar.xz build-gpu
# BUNDLE is a tarball or a folder (make_bundle.sh --dir). With the CUDA emulator's build
# (CAFFE_CUDA_EMU_DEVICES=2, BUILD_DIR build-emu) the GPU cases run too, from the bundle.
# Logs: $LOG_DIR (default /tmp/check_bundle_logs); $RUN_TESTS_JOBS programs at once (default 2).
set -uo pipefail
SCRIPT="$(readlink -f "$0")"
REPO="$(dirname "$SCRIPT")/.."

if [ "${1:-}" = --inside ]; then  # --inside BUNDLE BUILD_DIR: in the namespace
  mount --bind "$2" "$3" || { echo "check_bundle: cannot mount $2 over $3" >&2; exit 255; }
  cd "$REPO" && exec "$2/run_tests.sh"
fi

BUNDLE="${1:-$REPO/bundle/gpu.tar.xz}"
BUILD_DIR="$(readlink -f "${2:-$REPO/build-gpu}")"
[ -e "$BUNDLE" ] ||
  { echo "check_bundle: $BUNDLE not found (scripts/gpu_prepare.sh)" >&2; exit 255; }
[ -d "$BUILD_DIR" ] || { echo "check_bundle: $BUILD_DIR not found" >&2; exit 255; }
if ! unshare -m true 2> /dev/null; then
  echo "check_bundle: SKIP: mount namespaces are not allowed here (unshare -m)"
  exit 0
fi
if [ -d "$BUNDLE" ]; then
  BUNDLE_DIR="$(readlink -f "$BUNDLE")"
else
  WORK="$(mktemp -d)"
  trap 'rm -rf "$WORK"' EXIT
  tar -xJf "$BUNDLE" -C "$WORK" || { echo "check_bundle: cannot unpack $BUNDLE" >&2; exit 255; }
  BUNDLE_DIR="$WORK/caffe-bundle"
fi
export LOG_DIR="${LOG_DIR:-/tmp/check_bundle_logs}" RUN_TESTS_JOBS="${RUN_TESTS_JOBS:-2}"
unshare -m "$SCRIPT" --inside "$BUNDLE_DIR" "$BUILD_DIR"
