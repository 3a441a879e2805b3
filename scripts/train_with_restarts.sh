#!/usr/bin/env bash
# Runs a training command again after it fails (a learner died, a node was lost), up to
# --max-restarts times, so a DDL job goes on from its newest snapshot without anyone watching
# (docs/CLUSTER.md). The command should resume by itself: give caffe train `-snapshot latest`.
# To run on the hosts still alive after one is lost, make the command a script that writes the
# rank file first (rank_gen.py --from-scheduler, or from a list of good hosts).
#
#   scripts/train_with_restarts.sh --max-restarts 3 -- \
#     mpirun -n 8 -rf 4x2.rf build/bin/caffe train -solver s.prototxt -gpu 0 \
#       -snapshot latest -ddl "-mode b:4x2"
#
# It stops at once, with the command's status, when the command succeeds, when it was ended by
# Ctrl-C (status 130) or by SIGTERM (143: the scheduler ends the job; the snapshot was taken),
# or after the last restart.
set -uo pipefail

max_restarts=3
delay=10
while [ $# -gt 0 ]; do
  case "$1" in
    --max-restarts) max_restarts="$2"; shift 2 ;;
    --delay) delay="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "train_with_restarts.sh: error: unknown option '$1' (expected --max-restarts N, --delay S, then -- and the command)" >&2; exit 2 ;;
  esac
done
if [ $# -eq 0 ]; then
  echo "train_with_restarts.sh: error: no command given after --" >&2
  exit 2
fi
case "$max_restarts$delay" in
  *[!0-9]*) echo "train_with_restarts.sh: error: --max-restarts and --delay take whole numbers" >&2; exit 2 ;;
esac

trap 'echo "train_with_restarts.sh: interrupted; not restarting" >&2; exit 130' INT
attempt=0
while true; do
  "$@"
  status=$?
  if [ "$status" -eq 0 ] || [ "$status" -eq 130 ] || [ "$status" -eq 143 ]; then
    exit "$status"
  fi
  if [ "$attempt" -ge "$max_restarts" ]; then
    echo "train_with_restarts.sh: the command failed with status $status after $attempt restart(s); giving up" >&2
    exit "$status"
  fi
  attempt=$((attempt + 1))
  echo "train_with_restarts.sh: the command failed with status $status; restart $attempt of $max_restarts in $delay s (from the newest snapshot, with -snapshot latest)" >&2
  sleep "$delay"
done
