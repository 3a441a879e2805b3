#!/usr/bin/env bash
# Times a cold scripts/quickstart.sh on a fresh machine: a new Debian 12 (bookworm) root made by
# debootstrap from this machine's Debian mirror, holding only the base system, a clean clone of
# this checkout's HEAD and no ccache; quickstart.sh runs there in a chroot (/proc, /sys, /dev
# bound) from nothing, packages included, on the cores given. Prints the time of each phase, the
# total, the CPU time it used, and the load average before and during the run: take the figure on
# an otherwise idle machine (load under 0.5 before the start), since other builds on the cores
# lengthen the compile; on a busy one, the CPU time over the cores bounds the compile's share.
#   benchmarks/fresh_quickstart.sh [--root DIR] [--base DIR] [--cores N]
#     --root   the fresh machine's folder, made anew each run (default /work/chroot-fresh)
#     --base   the debootstrap result it is copied from, made on the first run and kept
#              (default /work/chroot-base; delete it to bootstrap again)
#     --cores  the cores quickstart.sh may use (default 2: taskset 0..N-1)
# Needs root and debootstrap (apt-get install debootstrap). The log is kept in ROOT/quickstart.log.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=/work/chroot-fresh
BASE=/work/chroot-base
CORES=2
while [ $# -gt 0 ]; do
  case "$1" in
    --root|--base|--cores)
      [ $# -ge 2 ] || { echo "fresh_quickstart: $1 needs a value" >&2; exit 2; } ;;
  esac
  case "$1" in
    --root) ROOT="$2"; shift 2 ;;
    --base) BASE="$2"; shift 2 ;;
    --cores) CORES="$2"; shift 2 ;;
    *) echo "fresh_quickstart: unknown option '$1' (expected --root, --base, --cores)" >&2
       exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "fresh_quickstart: needs root (debootstrap, chroot)" >&2; exit 1; }
command -v debootstrap > /dev/null ||
  { echo "fresh_quickstart: debootstrap not found: apt-get install debootstrap" >&2; exit 1; }

# This machine's Debian mirror (deb822 sources, or the one-line form).
MIRROR="$(sed -n 's/^URIs: *\(.*\/debian\)\/*$/\1/p' /etc/apt/sources.list.d/*.sources \
  2> /dev/null | head -n 1)"
if [ -z "$MIRROR" ]; then
  MIRROR="$(sed -n 's/^deb \(\[[^]]*\] \)\?\([^ ]*\/debian\)\/\? bookworm .*/\2/p' \
    /etc/apt/sources.list 2> /dev/null | head -n 1)"
fi
MIRROR="${MIRROR:-http://deb.debian.org/debian}"

if [ ! -x "$BASE/bin/bash" ]; then
  echo "fresh_quickstart: debootstrap bookworm from $MIRROR into $BASE"
  debootstrap --arch=amd64 bookworm "$BASE" "$MIRROR" > "$BASE.debootstrap.log" 2>&1 ||
    { tail -20 "$BASE.debootstrap.log"; exit 1; }
  rm -rf "$BASE"/var/cache/apt/archives/*.deb "$BASE"/var/lib/apt/lists/*
fi

SAMPLER=""
cleanup() {
  if [ -n "$SAMPLER" ]; then kill "$SAMPLER" 2> /dev/null || true; fi
  for mount in dev sys proc; do
    if mountpoint -q "$ROOT/$mount"; then umount -l "$ROOT/$mount"; fi
  done
}
trap cleanup EXIT
cleanup
rm -rf "$ROOT"
cp -a "$BASE" "$ROOT"
# The mirror, as this machine has it; name resolution.
cat > "$ROOT/etc/apt/sources.list" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
EOF
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
git clone -q --no-hardlinks "$PWD" "$ROOT/root/caffe"
git -C "$ROOT/root/caffe" checkout -q "$(git rev-parse HEAD)"
for mount in proc sys dev; do mount --bind "/$mount" "$ROOT/$mount"; done

echo "fresh_quickstart: load before: $(uptime | sed 's/.*load average/load average/')"
echo "fresh_quickstart: scripts/quickstart.sh in $ROOT on cores 0-$((CORES - 1)) ($(git log \
  --oneline -1 | cut -c1-60))"
# Every 2 s: the seconds since the start, the 1-minute load average (this run's own work
# included) and the CPU seconds of quickstart.sh's finished steps (its shell's own and its reaped
# children's, /proc/PID/stat fields 14-17), from which each phase's CPU time follows.
sample() {
  local pid="" cpu now ticks
  ticks="$(getconf CLK_TCK)"
  while sleep 2; do
    if [ -z "$pid" ] || [ ! -e "/proc/$pid" ]; then
      pid="$(pgrep -f -x 'bash scripts/quickstart.sh' | head -n 1 || true)"
    fi
    cpu=0
    if [ -n "$pid" ]; then
      cpu="$(awk -v t="$ticks" '{ sub(/.*\) /, ""); print ($12 + $13 + $14 + $15) / t }' \
        "/proc/$pid/stat" 2> /dev/null || echo 0)"
    fi
    printf -v now '%(%s)T' -1
    echo "$((now - START)) $(cut -d' ' -f1 /proc/loadavg) $cpu"
  done
}
START=$(date +%s)
sample > "$ROOT/samples.txt" &
SAMPLER=$!
# Each line stamped with the seconds since the start, for the phases below; bash's `time` writes
# the CPU seconds (user, system) of the whole run to cpu.txt.
set +e
TIMEFORMAT='%U %S'
{ time taskset -c "0-$((CORES - 1))" chroot "$ROOT" /usr/bin/env -i HOME=/root TERM=dumb \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
    bash -c 'cd /root/caffe && scripts/quickstart.sh' 2>&1; } 2> "$ROOT/cpu.txt" |
  while IFS= read -r line; do
    printf -v now '%(%s)T' -1
    echo "$((now - START)) $line"
  done > "$ROOT/quickstart.log"
STATUS=${PIPESTATUS[0]}
set -e
END=$(date +%s)
kill "$SAMPLER"
SAMPLER=""
echo "fresh_quickstart: load during the run (1-minute average, its own included): mean" \
  "$(awk '{ s += $2; n++ } END { printf "%.1f", n ? s / n : 0 }' "$ROOT/samples.txt")," \
  "highest $(cut -d' ' -f2 "$ROOT/samples.txt" | sort -n | tail -n 1)"
tail -3 "$ROOT/quickstart.log"
if [ "$STATUS" != 0 ]; then
  echo "fresh_quickstart: quickstart.sh failed ($STATUS): $ROOT/quickstart.log" >&2
  exit 1
fi

# The phases: where each one's first line appears.
at() { grep -m1 -E "$1" "$ROOT/quickstart.log" | cut -d' ' -f1; }
t_build="$(at '^[0-9]+ quickstart: building')"
t_digits="$(at '^[0-9]+ quickstart: the bundled digits')"
t_lmdb="$(at 'Creating lmdb')"
t_train="$(at '^[0-9]+ quickstart: training')"
TOTAL=$((END - START))
CPU_TOTAL="$(awk '{ printf "%.0f", $1 + $2 }' "$ROOT/cpu.txt")"
# The CPU seconds of the steps finished by time $1: the first sample from then on.
cpu_by() { awk -v t="$1" '$1 >= t { printf "%.0f", $3; exit }' "$ROOT/samples.txt"; }
c_build="$(cpu_by "$t_build")"
c_digits="$(cpu_by "$t_digits")"
c_train="$(cpu_by "$t_train")"
echo "fresh_quickstart: wall (CPU) seconds: packages $t_build ($c_build)," \
  "configure and compile $((t_digits - t_build)) ($((c_digits - c_build)))," \
  "digits $((t_train - t_digits)) ($((c_train - c_digits)); LMDBs $((t_train - t_lmdb)) s wall)," \
  "training $((TOTAL - t_train)) ($((CPU_TOTAL - c_train)))"
echo "fresh_quickstart: total $TOTAL s ($((TOTAL / 60)) min $((TOTAL % 60)) s), CPU $CPU_TOTAL s"
