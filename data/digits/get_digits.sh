#!/usr/bin/env bash
# Builds the bundled small dataset: the real UCI handwritten digits (1797 8x8 scans) as MNIST idx
# files in this folder (train: first 1500, t10k: last 297; upscaled bilinearly to 28x28, 0..16 ->
# 0..255; see digits_to_idx.py for the exact sampling).
#
# The digits come from Debian's python3-sklearn package (sklearn/datasets/data/digits.csv.gz),
# which is neither installed nor needed as a library: an installed copy anywhere on this machine
# is used if found, else the package is fetched with `apt-get download` into a temporary folder and
# unpacked there with `dpkg -x` (no root, nothing installed). DIGITS_CSV=/path/to/digits.csv.gz
# skips the search. Nothing is done when the four files exist already.
set -euo pipefail

DIR="$(cd "$(dirname "$0")" && pwd -P)"
FILES=(train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte)
CSV_SUFFIX="sklearn/datasets/data/digits.csv.gz"

fail() {
  echo "get_digits.sh: $*" >&2
  exit 1
}

missing=0
for f in "${FILES[@]}"; do
  [ -s "$DIR/$f" ] || missing=1
done
if [ "$missing" -eq 0 ]; then
  echo "The digits idx files are already in $DIR; nothing to do."
  exit 0
fi

command -v python3 > /dev/null || fail "python3 is required"

find_installed_csv() {
  local dirs candidate
  # Every folder Python would import sklearn from, plus Debian's own location.
  dirs="$(python3 -c 'import site, sys
paths = list(sys.path) + site.getsitepackages() + [site.getusersitepackages()]
print("\n".join(p for p in paths if p))' 2> /dev/null || true)"
  dirs="$dirs
/usr/lib/python3/dist-packages"
  while IFS= read -r d; do
    candidate="$d/$CSV_SUFFIX"
    if [ -n "$d" ] && [ -f "$candidate" ]; then
      echo "$candidate"
      return 0
    fi
  done <<< "$dirs"
  return 1
}

TMP=""
cleanup() {
  if [ -n "$TMP" ]; then rm -rf "$TMP"; fi
}
trap cleanup EXIT

if [ -n "${DIGITS_CSV:-}" ]; then
  [ -f "$DIGITS_CSV" ] || fail "DIGITS_CSV='$DIGITS_CSV' does not exist"
  CSV="$DIGITS_CSV"
  echo "Using $CSV (from DIGITS_CSV)."
elif CSV="$(find_installed_csv)"; then
  echo "Using the installed $CSV."
else
  command -v apt-get > /dev/null || fail "sklearn's digits.csv.gz is not installed and apt-get is \
not available to fetch python3-sklearn; set DIGITS_CSV=/path/to/digits.csv.gz"
  command -v dpkg > /dev/null || fail "dpkg is required to unpack python3-sklearn"
  TMP="$(mktemp -d)"
  chmod 755 "$TMP"  # apt-get downloads as the _apt user when it can reach the folder
  echo "Fetching python3-sklearn with apt-get download (the package is unpacked in a temporary \
folder, not installed)..."
  if ! (cd "$TMP" && apt-get download python3-sklearn); then
    fail "'apt-get download python3-sklearn' failed (no network, or no package lists: run \
'apt-get update' as root first); or set DIGITS_CSV=/path/to/digits.csv.gz"
  fi
  deb="$(ls "$TMP"/python3-sklearn_*.deb 2> /dev/null | head -n 1)"
  [ -n "$deb" ] || fail "apt-get download left no python3-sklearn .deb in $TMP"
  echo "Unpacking python3-sklearn $(dpkg-deb -f "$deb" Version)..."
  dpkg -x "$deb" "$TMP/root"
  CSV="$(find "$TMP/root" -path "*/$CSV_SUFFIX" -print -quit)"
  [ -n "$CSV" ] || fail "python3-sklearn ($deb) holds no $CSV_SUFFIX"
fi

python3 "$DIR/digits_to_idx.py" --csv "$CSV" --out "$DIR"
echo "Done: ${FILES[*]} in $DIR"
