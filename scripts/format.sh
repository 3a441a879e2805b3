#!/usr/bin/env bash
# Formats the project's C++ and CUDA sources with .clang-format (Google style, 100 columns).
#   scripts/format.sh            # rewrites the files in place
#   scripts/format.sh --check    # changes nothing; lists the files that differ and exits 1
# Files: every tracked .cpp/.hpp/.cu/.cuh/.h under src, include, tools, python, benchmarks and
# examples (git ls-files, so build trees and generated code are never touched).
set -euo pipefail
cd "$(dirname "$0")/.."
CLANG_FORMAT="${CLANG_FORMAT:-clang-format}"
if ! command -v "$CLANG_FORMAT" > /dev/null; then
  echo "format: $CLANG_FORMAT not found (scripts/install_deps.sh installs Debian's clang-format)" >&2
  exit 77  # the ctest `format` skips, saying so
fi
mapfile -t files < <(git ls-files -- 'src/*' 'include/*' 'tools/*' 'python/*' 'benchmarks/*' \
  'examples/*' | grep -E '\.(cpp|hpp|cu|cuh|h)$')
if [ "${1:-}" = "--check" ]; then
  # --dry-run --Werror: one error line per place that differs, "FILE:LINE:COL: error: ...".
  mapfile -t differ < <(printf '%s\0' "${files[@]}" |
    xargs -0 -n 100 "$CLANG_FORMAT" --style=file --dry-run --Werror 2>&1 |
    sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: .*clang-format-violations.*/\1/p' | sort -u)
  if [ ${#differ[@]} -gt 0 ]; then
    printf '%s\n' "${differ[@]}"
    echo "format: ${#differ[@]} of ${#files[@]} files differ from .clang-format; run scripts/format.sh" >&2
    exit 1
  fi
  echo "format: all ${#files[@]} files match .clang-format"
  exit 0
fi
printf '%s\0' "${files[@]}" | xargs -0 -n 50 "$CLANG_FORMAT" --style=file -i
echo "format: ${#files[@]} files formatted"
