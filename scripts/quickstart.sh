#!/usr/bin/env bash
# The README's first command: installs the packages, builds, fetches the bundled handwritten
# digits, and trains BVLC's LeNet on them with BVLC's lenet_solver settings, ending with the test
# accuracy. The training log is kept in examples/mnist/lenet_digits_train.log.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install_deps.sh
scripts/build.sh
data/digits/get_digits.sh
examples/mnist/create_digits.sh

LOG=examples/mnist/lenet_digits_train.log
examples/mnist/train_lenet_digits.sh 2>&1 | tee "$LOG"
echo
echo "quickstart: final test accuracy (LeNet, 2000 iterations, 297 held-out digits):"
grep "Test net output #0: accuracy" "$LOG" | tail -1 | sed 's/.*accuracy = /  accuracy = /'
