#!/usr/bin/env sh
# Writes a copy of a net whose first Input layer has another shape, the other layers unchanged:
#   examples/lms/resize_input.sh IN.prototxt OUT.prototxt DIM...
# e.g. GoogLeNet's deploy net at 10x3x1200x1200 instead of 10x3x224x224:
#   examples/lms/resize_input.sh models/bvlc_googlenet/deploy.prototxt googlenet_1200.prototxt \
#     10 3 1200 1200
# The DIMs replace the shape's dims in order and must be as many. Run from anywhere; relative
# paths are taken from the current folder.
set -e
if [ $# -lt 3 ]; then
  echo "usage: $(basename "$0") IN.prototxt OUT.prototxt DIM..." >&2
  exit 1
fi
in="$1"
out="$2"
shift 2
for dim in "$@"; do
  case "$dim" in
    '' | *[!0-9]* | 0*)
      echo "$(basename "$0"): error: dim '$dim' is not a whole number >= 1" >&2
      exit 1
      ;;
  esac
done
if [ ! -r "$in" ]; then
  echo "$(basename "$0"): error: $in cannot be read" >&2
  exit 1
fi
# Inside the first input_param { ... } (on one line or several), each "dim: N" in turn becomes
# the next DIM; the exit status says how many dims that shape had when they differ from DIMs.
status=0
awk -v dims="$*" '
  BEGIN { wanted = split(dims, dim, " ") }
  !done && /input_param/ { inside = 1 }
  inside {
    rest = $0
    line = ""
    while (match(rest, /dim: *[0-9]+/)) {
      found++
      line = line substr(rest, 1, RSTART - 1) "dim: " (found <= wanted ? dim[found] : "?")
      rest = substr(rest, RSTART + RLENGTH)
    }
    $0 = line rest
    depth += gsub(/\{/, "{") - gsub(/\}/, "}")
    if (depth <= 0) { inside = 0; done = 1 }
  }
  { print }
  END { if (found != wanted) exit 100 + found }' "$in" > "$out" || status=$?
if [ "$status" -ne 0 ]; then
  rm -f "$out"
  if [ "$status" -gt 100 ]; then
    echo "$(basename "$0"): error: the first Input layer of $in has $((status - 100)) dims;" \
         "$# were given" >&2
  elif [ "$status" -eq 100 ]; then
    echo "$(basename "$0"): error: $in has no Input layer with a shape (input_param)" >&2
  fi
  exit 1
fi
