#!/usr/bin/env bash
# The web server (docs/WEB.md): datasets from folders of images, models trained and watched live,
# classification, in a browser at http://127.0.0.1:5000/.
#   scripts/web.sh [--host 127.0.0.1] [--port 5000] [--jobs DIR] [--data DIR] [--build DIR]
#                  [--gpus 0,1|none] [--max-upload-mb 16]
# Python 3 with Debian's python3-flask, python3-psutil, python3-lmdb, python3-pil and
# libjs-chart.js (scripts/install_deps.sh), and a build of Caffe with pycaffe (scripts/build.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd -P)"
BUILD="$ROOT/build"
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[$i]}" in
    --build) BUILD="${args[$((i + 1))]:-$BUILD}" ;;
    --build=*) BUILD="${args[$i]#--build=}" ;;
  esac
done
# The Python that pycaffe was built for (Debian's, where its packages are).
PYTHON="$(sed -n 's/^_Python3_EXECUTABLE:INTERNAL=//p' "$BUILD/CMakeCache.txt" 2> /dev/null || true)"
PYTHON="${PYTHON:-/usr/bin/python3}"
export PYTHONPATH="$ROOT/web:$BUILD/python${PYTHONPATH:+:$PYTHONPATH}"
exec "$PYTHON" -m caffe_web "$@"
