# Sourced by the create_*.sh scripts, from the repository root, before they delete the databases
# they rebuild: a missing input then costs nothing that was there.
#   require_files "HINT" FILE...   exits 1 naming the first FILE that is missing, and HINT (how to
#                                  get it), in one line on stderr.
require_files() {
  hint="$1"
  shift
  for file in "$@"; do
    if [ ! -e "$file" ]; then
      echo "$(basename "$0"): error: $file not found: $hint" >&2
      exit 1
    fi
  done
}
