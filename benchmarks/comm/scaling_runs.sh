#!/usr/bin/env bash
# The measurements behind benchmarks/comm/scaling_model.py (docs/DDL.md, "Scaling: the cost model
# against measurement"): allreduce_perf on the network-namespace cluster of netns_cluster.sh, one
# output file per layout in OUT, each headed by the date, the layout and the load average.
#
#   BUILD=build-ddl OUT=/tmp/scaling-runs benchmarks/comm/scaling_runs.sh            # as root
#   BUILD=build-ddl OUT=/tmp/scaling-runs benchmarks/comm/scaling_runs.sh h2x1 h2x2  # some only
#
# Layouts, hHOSTSxLEARNERS_PER_HOST: h1x2 (two learners on shared memory: tier 0) and h2x1 (one
# learner on each of two hosts: the shaped link, tier 1) calibrate; h1x4, h2x2, h4x1, h2x4 and
# h4x2 validate (flat ring, rcs, mpi over all learners and, with several learners a host, the
# modes r, c, m, b as XxY). RATE (default 1gbit) shapes each host's link; OMP_NUM_THREADS=1.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${OUT:-/tmp/scaling-runs}"
export OMP_NUM_THREADS=1 GLOG_minloglevel=1
BUILD="${BUILD:-$HERE/../../build}"
export BUILD
[ -n "${LD_LIBRARY_PATH:-}" ] || export LD_LIBRARY_PATH="$BUILD/lib"
mkdir -p "$OUT"

run_layout() {
  local layout=$1 hosts lph
  hosts=${layout#h}
  hosts=${hosts%x*}
  lph=${layout#*x}
  export HOSTS=$hosts LEARNERS_PER_HOST=$lph
  local sizes=(-b 4K -e 64M -f 4) modes=()
  if ((lph > 1 && hosts > 1)); then
    sizes=(-b 1M -e 64M -f 4)
    modes=(-m "r:${lph}x${hosts},c:${lph}x${hosts},m:${lph}x${hosts},b:${lph}x${hosts}")
  fi
  "$HERE/netns_cluster.sh" up >/dev/null
  trap '"$HERE/netns_cluster.sh" down' EXIT
  {
    echo "# layout $layout: $hosts hosts x $lph learners, ${RATE:-1gbit} between hosts"
    echo "# start $(date -u '+%Y-%m-%d %H:%M:%S') UTC, load average $(cut -d' ' -f1-3 /proc/loadavg)"
    "$HERE/netns_cluster.sh" run "$BUILD/bin/allreduce_perf" "${sizes[@]}" -n 5 -w 1 -c 1 \
      -a ring,rcs,mpi "${modes[@]}" 2>&1 | grep -v "^[IW][0-9]"
    echo "# end $(date -u '+%Y-%m-%d %H:%M:%S') UTC, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  } | tee "$OUT/$layout.txt"
  "$HERE/netns_cluster.sh" down
  trap - EXIT
}

layouts=("$@")
[ ${#layouts[@]} -gt 0 ] || layouts=(h1x2 h2x1 h1x4 h4x1 h2x2 h2x4 h4x2)
for layout in "${layouts[@]}"; do run_layout "$layout"; done
