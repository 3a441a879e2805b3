#!/bin/sh
# BVLC's parse_log.sh: writes <log name>.train ("# Iters Seconds TrainingLoss LearningRate") and
# <log name>.test ("# Iters Seconds TestAccuracy TestLoss": test net outputs #0 and #1) in the
# current folder, from a log of `caffe train`. parse_log.py --tables does the work (BVLC's
# script looked for "Test score" lines, which today's logs no longer print).
#   tools/extra/parse_log.sh caffe.log
DIR="$(cd "$(dirname "$0")" && pwd -P)"
if [ "$#" -lt 1 ]; then
  echo "Usage parse_log.sh /path/to/your.log" >&2
  exit 1
fi
exec python3 "$DIR/parse_log.py" --tables "$1" .
