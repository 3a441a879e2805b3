#!/usr/bin/env python3
"""Feeds the caffe tool mutated users' files and checks each mistake is one clear error line.

Each case takes a net, a solver or a weights file, makes one to three random mutations (a number
replaced by 0, -1, a huge or a fractional value, NaN; a field deleted, repeated or moved into
another message; a bottom or top renamed; an enum or a layer type swapped; bytes of a .caffemodel
flipped, cut off or inserted) and runs `caffe time`, `caffe train` or `caffe test` on it. The
tool may succeed (many mutations leave a valid file) or fail; it must never crash, abort on a
CHECK, hang, or fail without a `caffe <command>: error:` line. Cases that break the rule are kept
in --keep and named with the command that ran them. Exit status: the number of such cases.

    scripts/fuzz_inputs.py --caffe build/bin/caffe --cases 300 --seed 1 NET.prototxt...
    scripts/fuzz_inputs.py --caffe build/bin/caffe --mode solver --cases 100
    scripts/fuzz_inputs.py --caffe build/bin/caffe --mode weights [--weights W.caffemodel NET]
    scripts/fuzz_inputs.py --caffe build/bin/caffe --golden ...   # and ../shared's golden nets

Nets must run as they are (Input or DummyData layers: no data files). The solver mode mutates a
small solver whose net is inline (DummyData); the weights mode corrupts the weights that solver
writes after two iterations, and those of --weights for the net given with it. --golden adds the
golden fixtures' nets (and in the weights mode their weights) of $CAFFE_SHARED_DIR, by default
../shared beside the repository, where they exist.
"""
import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

NUMBERS = ["0", "-1", "1", "2", "3", "7", "100000", "2147483648", "-2147483649", "4294967297",
           "0.5", "-0.5", "1e30", "nan", "inf"]
ENUMS = ["MAX", "AVE", "STOCHASTIC", "SUM", "PROD", "CAFFE", "CUDNN", "TRAIN", "TEST", "FULL",
         "NONE", "BATCH_SIZE", "WITHIN_CHANNEL", "ACROSS_CHANNELS", "HDF5", "FOO"]
LAYER_TYPES = ["Convolution", "Pooling", "InnerProduct", "ReLU", "Softmax", "SoftmaxWithLoss",
               "Concat", "Slice", "Eltwise", "Reshape", "Flatten", "Split", "LRN", "BatchNorm",
               "Scale", "Crop", "Deconvolution", "Accuracy", "Embed", "LSTM", "RNN", "Im2col",
               "SPP", "Tile", "Reduction", "ArgMax", "Dropout", "Bias", "Filter", "BatchReindex",
               "Power", "Threshold", "EuclideanLoss", "InfogainLoss", "HingeLoss",
               "SigmoidCrossEntropyLoss", "ContrastiveLoss", "MVN", "PReLU", "Silence", "Nope"]
SOLVER_STRINGS = ["SGD", "Adam", "Nesterov", "AdaGrad", "RMSProp", "AdaDelta", "Foo", "fixed",
                  "step", "exp", "inv", "multistep", "poly", "sigmoid", "L1", "L2", "L3", ""]

SOLVER = """net_param {
  name: "tiny"
  layer {
    name: "data"
    type: "DummyData"
    top: "data"
    top: "label"
    dummy_data_param {
      data_filler {
        type: "gaussian"
        std: 1
      }
      data_filler {
        type: "constant"
        value: 1
      }
      shape {
        dim: 4
        dim: 3
        dim: 6
        dim: 6
      }
      shape {
        dim: 4
      }
    }
  }
  layer {
    name: "conv"
    type: "Convolution"
    bottom: "data"
    top: "conv"
    param {
      lr_mult: 1
      decay_mult: 1
    }
    param {
      lr_mult: 2
      decay_mult: 0
    }
    convolution_param {
      num_output: 4
      kernel_size: 3
      weight_filler {
        type: "xavier"
      }
    }
  }
  layer {
    name: "ip"
    type: "InnerProduct"
    bottom: "conv"
    top: "ip"
    inner_product_param {
      num_output: 3
      weight_filler {
        type: "gaussian"
        std: 0.1
      }
    }
  }
  layer {
    name: "loss"
    type: "SoftmaxWithLoss"
    bottom: "ip"
    bottom: "label"
    top: "loss"
  }
  layer {
    name: "accuracy"
    type: "Accuracy"
    bottom: "ip"
    bottom: "label"
    top: "accuracy"
    include {
      phase: TEST
    }
  }
}
test_iter: 2
test_interval: 2
base_lr: 0.01
momentum: 0.9
momentum2: 0.999
delta: 1e-8
rms_decay: 0.98
weight_decay: 0.0005
regularization_type: "L2"
lr_policy: "multistep"
gamma: 0.5
power: 0.75
stepsize: 2
stepvalue: 2
stepvalue: 3
clip_gradients: 10
iter_size: 1
average_loss: 1
display: 1
max_iter: 4
snapshot: 2
snapshot_prefix: "{prefix}"
snapshot_format: BINARYPROTO
type: "SGD"
random_seed: 1
"""

FIELD = re.compile(r"^(\s*)(\w+):\s*(.*)$")


def mutate_text(lines, rng, strings):
    """One random change to a prototxt, one field per line as Caffe writes them."""
    fields = [i for i, line in enumerate(lines) if FIELD.match(line)]
    if not fields:
        return lines
    lines = list(lines)

    def replace_value(pattern, values, quote=False):
        chosen = [i for i in fields if re.match(pattern, lines[i])]
        if chosen:
            i = rng.choice(chosen)
            indent, key, _ = FIELD.match(lines[i]).groups()
            value = rng.choice(values)
            lines[i] = '%s%s: "%s"' % (indent, key, value) if quote else \
                "%s%s: %s" % (indent, key, value)

    blobs = sorted(set(re.findall(r'(?:top|bottom): "([^"]+)"', "\n".join(lines))))
    kind = rng.randrange(8)
    i = rng.choice(fields)
    if kind == 0:
        replace_value(r"^\s*\w+:\s*-?[\d.]", NUMBERS)
    elif kind == 1:
        del lines[i]
    elif kind == 2:
        replace_value(r"^\s*(top|bottom):", blobs + ["no_such_blob"], quote=True)
    elif kind == 3:
        replace_value(r"^\s*\w+:\s*[A-Z_]+\s*$", ENUMS)
    elif kind == 4:
        replace_value(r'^\s*type:\s*"', LAYER_TYPES, quote=True)
    elif kind == 5:
        lines.insert(i, lines[i])
    elif kind == 6:  # a field moved into another message
        j = rng.choice(fields)
        line = lines.pop(i)
        lines.insert(j, line)
    else:
        replace_value(r'^\s*(type|lr_policy|regularization_type|name):\s*"', strings, quote=True)
    return lines


def mutate_bytes(data, rng):
    data = bytearray(data)
    kind = rng.randrange(3)
    if kind == 0:  # bytes changed, mostly near the start where the layers' names and shapes are
        for _ in range(rng.randint(1, 8)):
            end = len(data) if rng.random() < 0.3 else min(len(data), 4096)
            data[rng.randrange(end)] = rng.randrange(256)
    elif kind == 1:
        data = data[:rng.randrange(len(data))]
    else:
        at = rng.randrange(len(data))
        data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
    return bytes(data)


def golden_pairs(shared):
    """(net, weights) of each golden fixture there is."""
    golden = os.path.join(shared, "fixtures", "golden")
    names = sorted(os.listdir(golden)) if os.path.isdir(golden) else []
    pairs = [(os.path.join(golden, name, "net.prototxt"),
              os.path.join(golden, name, "weights.caffemodel")) for name in names]
    return [(net, weights) for net, weights in pairs if os.path.isfile(net)]


def tiny_weights(caffe, work):
    """The solver's net as a file and the weights two iterations of training write."""
    with open(os.path.join(work, "solver.prototxt"), "w") as f:
        f.write(SOLVER.replace("{prefix}", os.path.join(work, "tiny")))
    subprocess.run([caffe, "train", "-solver", os.path.join(work, "solver.prototxt")],
                   check=True, capture_output=True, timeout=300)
    net = os.path.join(work, "tiny.prototxt")
    body = SOLVER[SOLVER.index("{") + 1:SOLVER.index("\n}\n") + 1]
    with open(net, "w") as f:
        f.write(body)
    return net, os.path.join(work, "tiny_iter_2.caffemodel")


def verdict(code, stderr):
    """None when the run kept the rule, else what broke it."""
    if code is None:
        return "hang"
    if code < 0 or code > 1:
        return "exit status %d" % code
    for sign in ("Check failed", "stack trace", "terminate called", "Segmentation"):
        if sign in stderr:
            return "'%s'" % sign
    if code == 1 and not re.search(r"^caffe \w+: error: ", stderr, re.M):
        return "no error line"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--caffe", required=True, help="the caffe tool to run")
    parser.add_argument("--mode", choices=["net", "solver", "weights"], default="net")
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--weights", help="weights mode: a .caffemodel of the net given")
    parser.add_argument("--golden", action="store_true",
                        help="add the golden fixtures' nets and weights where they exist")
    parser.add_argument("--timeout", type=float, default=60, help="seconds a run may take")
    parser.add_argument("--keep", default="fuzz_failures", help="folder for the failing cases")
    parser.add_argument("nets", nargs="*", help="the nets (weights mode: the net of --weights)")
    args = parser.parse_args()
    pairs = golden_pairs(os.environ.get("CAFFE_SHARED_DIR") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared")) if args.golden else []
    if args.mode == "net":
        args.nets += [net for net, _ in pairs]
        if not args.nets:
            parser.error("the net mode needs at least one net (or --golden, with ../shared)")
    elif args.mode == "weights" and bool(args.weights) != (len(args.nets) == 1):
        parser.error("--weights goes with one net, the one they fit")
    elif args.mode == "solver" and args.nets:
        parser.error("the solver mode takes no nets")
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="fuzz_inputs.")
    if args.mode == "weights":
        pairs = [tiny_weights(args.caffe, work)] + [p for p in pairs if os.path.isfile(p[1])]
        if args.weights:
            pairs.append((args.nets[0], args.weights))
    ran = clear = failures = 0
    try:
        for case in range(args.cases):
            net = rng.choice(args.nets) if args.mode == "net" else None
            if args.mode == "weights":
                net, weights = rng.choice(pairs)
                path = os.path.join(work, "case.caffemodel")
                with open(weights, "rb") as f:
                    original = f.read()
                with open(path, "wb") as f:
                    f.write(mutate_bytes(original, rng))
                command = ["test", "-model", net, "-weights", path, "-iterations", "1"]
            else:
                if args.mode == "solver":
                    text = SOLVER.replace("{prefix}", os.path.join(work, "snapshot"))
                else:
                    with open(net) as f:
                        text = f.read()
                lines = text.split("\n")
                for _ in range(rng.choice([1, 1, 1, 2, 3])):
                    lines = mutate_text(lines, rng, SOLVER_STRINGS if args.mode == "solver"
                                        else LAYER_TYPES)
                path = os.path.join(work, "case.prototxt")
                with open(path, "w") as f:
                    f.write("\n".join(lines))
                if args.mode == "solver":
                    command = ["train", "-solver", path]
                else:
                    command = ["time", "-model", path, "-iterations", "1", "-phase",
                               rng.choice(["TRAIN", "TEST"])]
            try:
                run = subprocess.run([args.caffe] + command, capture_output=True,
                                     timeout=args.timeout)
                code, stderr = run.returncode, run.stderr.decode("utf-8", "replace")
            except subprocess.TimeoutExpired:
                code, stderr = None, ""
            broke = verdict(code, stderr)
            if not broke:
                ran, clear = (ran + 1, clear) if code == 0 else (ran, clear + 1)
            else:
                failures += 1
                os.makedirs(args.keep, exist_ok=True)
                kept = os.path.join(args.keep, "case%d%s" % (case, os.path.splitext(path)[1]))
                shutil.copy(path, kept)
                print("FAIL case %d: %s: caffe %s" % (
                    case, broke, " ".join(command).replace(path, kept)))
                for line in [line for line in stderr.split("\n") if line.strip()][-3:]:
                    print("  " + line)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("fuzz_inputs: %s mode, %d cases (seed %d): %d ran, %d stopped with a clear error, "
          "%d broke the rule" % (args.mode, args.cases, args.seed, ran, clear, failures))
    return min(failures, 100)


if __name__ == "__main__":
    sys.exit(main())
