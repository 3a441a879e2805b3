# Sourced by the download scripts under data/ (bash). Errors name the calling script and exit 1.
#   fail MESSAGE...            prints "<script>: MESSAGE" on stderr and exits 1
#   fetch URL FILE HINT        downloads URL to FILE.part with wget or curl, then renames it FILE;
#                              on failure removes the partial file and fails with
#                              "could not download URL (HINT)"
#   unpack ARCHIVE URL [ARGS]  tar -xzf ARCHIVE ARGS, then removes ARCHIVE; a file that is not a
#                              .tar.gz (an error page instead of the data?) is removed and fails
#   check_size FILE BYTES      fails unless FILE exists and has exactly BYTES bytes

fail() {
  echo "$(basename "$0"): $*" >&2
  exit 1
}

fetch() {
  local url="$1" out="$2" hint="$3" status=0
  rm -f "$out.part"
  if command -v wget > /dev/null; then
    wget --no-verbose -O "$out.part" "$url" || status=$?
  elif command -v curl > /dev/null; then
    curl --fail --location --silent --show-error -o "$out.part" "$url" || status=$?
  else
    fail "neither wget nor curl is installed"
  fi
  if [ "$status" -ne 0 ]; then
    rm -f "$out.part"
    fail "could not download $url ($hint)"
  fi
  mv "$out.part" "$out"
}

unpack() {
  local archive="$1" url="$2"
  shift 2
  if ! tar -xzf "$archive" "$@"; then
    rm -f "$archive"
    fail "$url is not a valid .tar.gz archive (an error page instead of the data?)"
  fi
  rm -f "$archive"
}

check_size() {
  local file="$1" expected="$2" actual
  [ -e "$file" ] || fail "$PWD/$file is missing"
  actual="$(wc -c < "$file")"
  [ "$actual" -eq "$expected" ] || fail "$PWD/$file has $actual bytes, expected $expected: \
remove it and run this script again"
}
