#!/usr/bin/env bash
# A simulated two-level cluster on one machine, for DDL's hierarchical modes: HOSTS Linux network
# namespaces ("hosts") joined by veth links to a bridge, each host's link rate-limited with tc
# (tbf) so traffic between hosts is slow, while learners inside a host talk through shared memory.
# mpirun (in the root namespace) starts one Open MPI daemon per namespace through an "rsh agent"
# that enters the namespace (and its own UTS namespace, so each host has its own host name), and
# ranks are placed with a rank file from scripts/rank_gen.py (IBM's layout).
#
#   sudo benchmarks/comm/netns_cluster.sh                 # set up, run the comparison, tear down
#   RATE=500mbit LEARNERS_PER_HOST=2 HOSTS=2 BUILD=build-ddl benchmarks/comm/netns_cluster.sh
#   benchmarks/comm/netns_cluster.sh up|down              # only set up / tear down
#   benchmarks/comm/netns_cluster.sh run <caffe or allreduce_perf arguments...>
#   benchmarks/comm/netns_cluster.sh compress             # -compress none, fp16, bf16 compared
#
# The comparison: allreduce_perf for the flat ring over all learners, the explorer, and -mode b
# (XxY), then `caffe train` on a net with 17 MB of gradients with a flat ring and with -mode b,
# each with -dump_iter, so the per-dimension breakdown shows where the time goes.
# Needs root, iproute2 (ip, tc with the tbf qdisc), util-linux (unshare) and Open MPI.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BUILD="${BUILD:-$ROOT/build}"
[[ "$BUILD" = /* ]] || BUILD="$ROOT/$BUILD"
HOSTS="${HOSTS:-2}"
LEARNERS_PER_HOST="${LEARNERS_PER_HOST:-2}"
RATE="${RATE:-1gbit}"            # each host's link to the others
SUBNET="${SUBNET:-10.88.0}"
PREFIX="${PREFIX:-ddlsim}"       # namespaces ddlsim0..N-1, bridge ddlsimbr
WORK="${WORK:-/tmp/ddl_netns_cluster}"
LEARNERS=$((HOSTS * LEARNERS_PER_HOST))

host_name() { echo "${PREFIX}$1"; }

down() {
  for ((h = 0; h < HOSTS; ++h)); do
    ip netns del "$(host_name $h)" 2>/dev/null || true
    ip link del "${PREFIX}v$h" 2>/dev/null || true
  done
  ip link del "${PREFIX}br" 2>/dev/null || true
}

up() {
  [ "$(id -u)" -eq 0 ] || { echo "netns_cluster.sh: needs root (ip netns, tc)" >&2; exit 1; }
  down
  ip link add "${PREFIX}br" type bridge
  ip addr add "$SUBNET.254/24" dev "${PREFIX}br"
  ip link set "${PREFIX}br" up
  for ((h = 0; h < HOSTS; ++h)); do
    local ns
    ns="$(host_name $h)"
    ip netns add "$ns"
    ip link add "${PREFIX}v$h" type veth peer name eth0 netns "$ns"
    ip link set "${PREFIX}v$h" master "${PREFIX}br" up
    ip -n "$ns" addr add "$SUBNET.$((h + 1))/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    # Slow between hosts: both directions of each host's link (egress of either end).
    tc -n "$ns" qdisc add dev eth0 root tbf rate "$RATE" burst 256kb latency 50ms
    tc qdisc add dev "${PREFIX}v$h" root tbf rate "$RATE" burst 256kb latency 50ms
  done
  mkdir -p "$WORK"
  # The rsh agent: Open MPI runs `agent HOST COMMAND...` to start its daemon "on" HOST.
  cat > "$WORK/agent.sh" <<EOF
#!/bin/sh
host="\$1"; shift
exec ip netns exec "\$host" unshare --uts sh -c "hostname \$host; \$*"
EOF
  chmod +x "$WORK/agent.sh"
  : > "$WORK/hostfile"
  local names=()
  for ((h = 0; h < HOSTS; ++h)); do
    echo "$(host_name $h) slots=$LEARNERS_PER_HOST" >> "$WORK/hostfile"
    names+=("$(host_name $h)")
  done
  local sockets cores
  read -r sockets cores < <(python3 -c "import sys; sys.path.insert(0, '$ROOT/scripts'); \
import rank_gen; print(*rank_gen.machine_layout())")
  # Every "host" is this machine: bind within its cores, several learners per core if need be.
  python3 "$ROOT/scripts/rank_gen.py" "${LEARNERS_PER_HOST}x${HOSTS}" \
    "$(IFS=,; echo "${names[*]}")" --sockets 1 --cores "$LEARNERS_PER_HOST" \
    | awk -v cores=$((sockets * cores)) '/^rank/ {split($3, s, ":"); $3 = "slot=0:" s[2] % cores} {print}' \
    > "$WORK/ranks.rf"
  echo "netns_cluster: $HOSTS hosts x $LEARNERS_PER_HOST learners, $RATE between hosts"
}

mpirun_cluster() {
  local forward=(-x PATH -x OMPI_ALLOW_RUN_AS_ROOT -x OMPI_ALLOW_RUN_AS_ROOT_CONFIRM)
  [ -z "${LD_LIBRARY_PATH:-}" ] || forward+=(-x LD_LIBRARY_PATH)
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun \
    --hostfile "$WORK/hostfile" -rf "$WORK/ranks.rf" -n "$LEARNERS" \
    --mca plm_rsh_agent "$WORK/agent.sh" --mca plm_rsh_no_tree_spawn 1 \
    --mca oob_tcp_if_include "$SUBNET.0/24" --mca btl self,vader,tcp \
    --mca btl_tcp_if_include "$SUBNET.0/24" --mca orte_keep_fqdn_hostnames 1 \
    "${forward[@]}" "$@"
}

write_net() {
  # DummyData only (no files to share); 64 -> 4096 -> 1000: 4.4 M parameters, 17 MB of gradients.
  cat > "$WORK/solver.prototxt" <<'EOF'
base_lr: 0.001 lr_policy: "fixed" momentum: 0.9 display: 10 max_iter: 30 solver_mode: CPU
snapshot_after_train: false random_seed: 1
net_param { name: "WideMLP"
  layer { name: "data" type: "DummyData" top: "data" top: "label"
    dummy_data_param { shape { dim: 8 dim: 64 } shape { dim: 8 }
      data_filler { type: "gaussian" } data_filler { type: "constant" value: 3 } } }
  layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "ip1"
    inner_product_param { num_output: 4096 weight_filler { type: "xavier" } } }
  layer { name: "relu" type: "ReLU" bottom: "ip1" top: "ip1" }
  layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2"
    inner_product_param { num_output: 1000 weight_filler { type: "xavier" } } }
  layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip2" bottom: "label" top: "loss" }
}
EOF
}

compare() {
  up
  trap down EXIT
  write_net
  local x=$LEARNERS_PER_HOST y=$HOSTS
  echo "== rank file ($WORK/ranks.rf)"
  cat "$WORK/ranks.rf"
  echo "== allreduce_perf: flat ring over $LEARNERS learners, explorer, -mode b:${x}x${y}"
  mpirun_cluster "$BUILD/bin/allreduce_perf" -b 1M -e 64M -f 4 -n 5 -w 1 -c 1 \
    -a MPI_Allreduce,ring -m "p:${x}x${y},b:${x}x${y}" 2>&1 | grep -v "^I[0-9]"
  for mode in "r:$LEARNERS" "b:${x}x${y}" "p:${x}x${y}"; do
    echo "== caffe train -ddl \"-mode $mode -dump_iter 10\""
    mpirun_cluster "$BUILD/bin/caffe" train -solver "$WORK/solver.prototxt" \
      -ddl "-mode $mode -dump_iter 10" 2>&1 \
      | grep -E "DDL|dim [0-9]|max jitter|Iteration (10|20|30) \(|Optimization Done" \
      | sed -E 's/^I[0-9]+ [0-9:.]+ +[0-9]+ [a-z_]+\.cpp:[0-9]+\] //'
  done
}

# Bytes that crossed the links between hosts so far: both directions of every host's link, counted
# at the bridge's end (packets, headers included: what a switch would see).
link_bytes() {
  local total=0 h
  for ((h = 0; h < HOSTS; ++h)); do
    local statistics="/sys/class/net/${PREFIX}v$h/statistics"
    total=$((total + $(cat "$statistics/rx_bytes") + $(cat "$statistics/tx_bytes")))
  done
  echo "$total"
}

# -compress none, fp16, bf16: the bytes on the links and the time of a flat ring over all learners
# and of -mode r:XxY (ring inside each host, ring of the shards across hosts) over 64 MB, then
# `caffe train` on the 17 MB MLP with -mode r:XxY (iterations per second, bytes per iteration).
# Fixed algorithms, not b or p: the explorer's trial allreduces would count in the bytes. Each
# allreduce_perf run is 1 check + 1 warm-up + 5 timed allreduces.
compress_compare() {
  up
  trap down EXIT
  write_net
  local mode="r:${LEARNERS_PER_HOST}x${HOSTS}" compression before after
  echo "== allreduce_perf over 64 MB, then caffe train (17 MB of gradients, 30 iterations)"
  for compression in none fp16 bf16; do
    for flat in "r:$LEARNERS" "$mode"; do
      before=$(link_bytes)
      mpirun_cluster "$BUILD/bin/allreduce_perf" -b 64M -e 64M -n 5 -w 1 -c 1 -a none \
        -m "$flat" -z "$compression" 2>&1 | grep -v -E "^(I[0-9]|WARNING: Logging)" | tail -n 1
      after=$(link_bytes)
      echo "   -mode $flat -compress $compression: $(((after - before) / 7)) link bytes per allreduce"
    done
    before=$(link_bytes)
    mpirun_cluster "$BUILD/bin/caffe" train -solver "$WORK/solver.prototxt" \
      -ddl "-mode $mode -compress $compression -dump_iter 10" 2>&1 \
      | grep -E "Iteration (10|20|30) \(|dim [0-9]" \
      | sed -E 's/^I[0-9]+ [0-9:.]+ +[0-9]+ [a-z_]+\.cpp:[0-9]+\] //'
    after=$(link_bytes)
    echo "   caffe train -compress $compression: $(((after - before) / 30)) link bytes per iteration"
  done
}

case "${1:-compare}" in
  up) up ;;
  compress) compress_compare ;;
  down) down ;;
  run) shift; mpirun_cluster "$@" ;;
  compare) compare ;;
  *) echo "usage: $0 [compare|compress|up|down|run ARGS...]" >&2; exit 2 ;;
esac
