#!/usr/bin/env python3
"""The DDL and LMS example scripts end to end (ctest examples_ddl_py and examples_lms_py).

Each test copies the scripts it runs, and the nets and solvers they name, into a scratch
repository root, makes small data there and runs them with the caffe of CAFFE_BIN (the other
tools from TOOLS, default CAFFE_BIN's folder); the ctests pass the build's. Standard library only.

- DdlExampleTest: examples/mnist/create_digits.sh on generated MNIST-like digits (a bar whose row
  is the digit), then examples/ddl/train_lenet_ddl.sh as 2 learners under mpirun for a few
  iterations: DDL's 2x1x1 job trains (the test accuracy rises to the last test), rank 0 writes the
  snapshot and the solver's copy is removed; from a rank file made by rank_gen.py the learners and
  the mode come from the file; CIFAR-10 quick likewise on generated batches; mistakes are one line.
- LmsExampleTest: examples/lms/time_lms.sh with -cpu at small sizes (GoogLeNet at 1x3x256x256, the
  3-D U-Net on a 16^3 volume): the resized net is written and timed, the LMS flags reach caffe
  (which says they have no effect on the CPU); resize_input.sh refuses a wrong number of dims.

    CAFFE_BIN=build/bin/caffe python3 scripts/test_ddl_lms_examples.py [DdlExampleTest]
"""

import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CAFFE_BIN = os.environ.get("CAFFE_BIN", "")
TOOLS = os.environ.get("TOOLS") or os.path.dirname(CAFFE_BIN)
ACCURACY = re.compile(r"Test net output #0: accuracy = ([0-9.]+)")


def need_caffe(test):
    """Skips `test` where CAFFE_BIN is not set; fails where it names no program."""
    if not CAFFE_BIN:
        test.skipTest("CAFFE_BIN is not set (the caffe binary to run the examples with)")
    test.assertTrue(os.access(CAFFE_BIN, os.X_OK), "CAFFE_BIN=%s is not a program" % CAFFE_BIN)


def digit_bar_pixel(image, pixel):
    """Pixel `pixel` of 28x28 image `image` of digit image % 10: a bar on row 2 + 2 * digit."""
    row, col = divmod(pixel, 28)
    return 150 + image % 100 if row == 2 + 2 * (image % 10) and 4 <= col < 24 else 0


def write_mnist_idx(images_path, labels_path, count):
    with open(images_path, "wb") as images:
        images.write(struct.pack(">IIII", 2051, count, 28, 28))
        for image in range(count):
            images.write(bytes(digit_bar_pixel(image, pixel) for pixel in range(28 * 28)))
    with open(labels_path, "wb") as labels:
        labels.write(struct.pack(">II", 2049, count))
        labels.write(bytes(image % 10 for image in range(count)))


def cifar_batch(records, seed):
    """`records` CIFAR-10 records, label (r + seed) % 10, pixels a pattern of the label."""
    content = bytearray()
    for record in range(records):
        label = (record + seed) % 10
        content.append(label)
        content.extend((label * 25 + (j % 32) * (label + 1) + record * 3) % 256
                       for j in range(3 * 32 * 32))
    return bytes(content)


class ScratchRoot(unittest.TestCase):
    """A scratch repository root holding copies of the files a test names."""

    def setUp(self):
        self.folder = tempfile.TemporaryDirectory(prefix="caffe_examples_")
        self.root = self.folder.name
        self.addCleanup(self.folder.cleanup)

    def copy(self, *paths):
        for path in paths:
            os.makedirs(os.path.join(self.root, os.path.dirname(path)), exist_ok=True)
            shutil.copy(os.path.join(SOURCE, path), os.path.join(self.root, path))

    def run_script(self, script, *args, timeout=300, **variables):
        """Runs `sh script args` in the root with `variables` added to the environment; returns
        (exit status, stdout and stderr together)."""
        env = dict(os.environ, CAFFE_BIN=CAFFE_BIN, TOOLS=TOOLS, OMP_NUM_THREADS="1",
                   OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        env.update(variables)
        result = subprocess.run(["sh", os.path.join(self.root, script)] + list(args), env=env,
                                cwd=self.root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, timeout=timeout)
        return result.returncode, result.stdout

    def assertOneLineError(self, status, log, message):
        self.assertEqual(status, 1, log)
        self.assertEqual(log.count("\n"), 1, log)
        self.assertIn(message, log)


@unittest.skipUnless(shutil.which("mpirun"), "Open MPI's mpirun is not installed")
class DdlExampleTest(ScratchRoot):

    def setUp(self):
        super().setUp()
        self.copy("examples/require_files.sh", "examples/ddl/ddl_train.sh",
                  "examples/ddl/train_lenet_ddl.sh",
                  "examples/ddl/lenet_digits_ddl_solver.prototxt",
                  "examples/ddl/train_cifar10_quick_ddl.sh",
                  "examples/ddl/cifar10_quick_ddl_solver.prototxt")

    def make_digits(self):
        self.copy("examples/mnist/create_digits.sh",
                  "examples/mnist/lenet_digits_train_test.prototxt")
        data = os.path.join(self.root, "data", "digits")
        os.makedirs(data)
        write_mnist_idx(os.path.join(data, "train-images-idx3-ubyte"),
                        os.path.join(data, "train-labels-idx1-ubyte"), 300)
        write_mnist_idx(os.path.join(data, "t10k-images-idx3-ubyte"),
                        os.path.join(data, "t10k-labels-idx1-ubyte"), 100)
        status, log = self.run_script("examples/mnist/create_digits.sh")
        self.assertEqual(status, 0, log)

    def leftovers(self):
        """The solver copies the scripts left in examples/ddl."""
        return [name for name in os.listdir(os.path.join(self.root, "examples", "ddl"))
                if name.startswith("run.")]

    def test_lenet_trains_as_two_learners_and_ends_with_a_test(self):
        need_caffe(self)
        self.make_digits()
        status, log = self.run_script("examples/ddl/train_lenet_ddl.sh", "-n", "2", ITERS="40",
                                      TEST_ITER="1")
        self.assertEqual(status, 0, log)
        self.assertIn("train_lenet_ddl.sh: 2 learners, -mode r:2, 40 iterations", log)
        self.assertRegex(log, r"mpirun -n 2 .*--oversubscribe .* train --solver=examples/ddl/run\.")
        self.assertIn("DDL: 2 learners as 2x1x1", log)
        self.assertIn("Iteration 40, Testing net (#0)", log)
        self.assertIn("Optimization Done.", log)
        accuracies = [float(value) for value in ACCURACY.findall(log)]
        self.assertEqual(len(accuracies), 2, log)  # before the first step and after the last
        self.assertGreater(accuracies[-1], accuracies[0] + 0.3, log)
        self.assertTrue(log.rstrip().endswith("Optimization Done."), log[-2000:])
        snapshot = os.path.join(self.root, "examples/ddl/lenet_digits_ddl_iter_40.caffemodel")
        self.assertTrue(os.path.exists(snapshot), log)
        self.assertEqual(self.leftovers(), [])

    def test_rank_file_gives_the_learners_and_the_mode(self):
        need_caffe(self)
        self.make_digits()
        host = subprocess.run(["hostname"], capture_output=True, text=True).stdout.strip()
        rank_file = os.path.join(self.root, "2x1.rf")
        with open(rank_file, "w") as out:
            subprocess.run([sys.executable, os.path.join(SOURCE, "scripts", "rank_gen.py"), "2",
                            host, "--sockets", "1", "--cores", "2"], stdout=out, check=True)
        status, log = self.run_script("examples/ddl/train_lenet_ddl.sh", "-rf", rank_file,
                                      ITERS="4", TEST_ITER="1")
        self.assertEqual(status, 0, log)
        self.assertIn("2 learners, -mode b:2x1x1, 4 iterations", log)
        self.assertIn("-rf %s " % rank_file, log)
        self.assertIn("DDL: 2 learners as 2x1x1", log)
        self.assertIn("Optimization Done.", log)

    def test_cifar10_quick_trains_as_two_learners(self):
        need_caffe(self)
        self.copy("examples/cifar10/create_cifar10.sh",
                  "examples/cifar10/cifar10_quick_train_test.prototxt")
        data = os.path.join(self.root, "data", "cifar10")
        os.makedirs(data)
        for batch in range(1, 6):
            with open(os.path.join(data, "data_batch_%d.bin" % batch), "wb") as out:
                out.write(cifar_batch(40, batch))
        with open(os.path.join(data, "test_batch.bin"), "wb") as out:
            out.write(cifar_batch(100, 0))
        status, log = self.run_script("examples/cifar10/create_cifar10.sh")
        self.assertEqual(status, 0, log)
        status, log = self.run_script("examples/ddl/train_cifar10_quick_ddl.sh", ITERS="4",
                                      TEST_ITER="1")
        self.assertEqual(status, 0, log)
        self.assertIn("2 learners, -mode r:2, 4 iterations", log)
        self.assertIn("DDL: 2 learners as 2x1x1", log)
        self.assertIn("Iteration 4, Testing net (#0)", log)
        self.assertEqual(len(ACCURACY.findall(log)), 2, log)
        self.assertTrue(os.path.exists(
            os.path.join(self.root, "examples/ddl/cifar10_quick_ddl_iter_4.caffemodel")), log)
        self.assertEqual(self.leftovers(), [])

    def test_schedule_is_divided_by_the_learners(self):
        # A stand-in caffe and mpirun print the solver each learner would read.
        shim = os.path.join(self.root, "shim")
        os.makedirs(shim)
        with open(os.path.join(shim, "mpirun"), "w") as out:
            out.write('#!/bin/sh\nwhile [ "$1" != train ]; do shift; done\n'
                      'cat "${2#--solver=}"\n')
        os.chmod(os.path.join(shim, "mpirun"), 0o755)
        for folder in ("mnist/digits_train_lmdb", "mnist/digits_test_lmdb",
                       "cifar10/cifar10_train_lmdb", "cifar10/cifar10_test_lmdb",
                       "cifar10/mean.binaryproto"):
            os.makedirs(os.path.join(self.root, "examples", folder))
        fields = re.compile(r"^(max_iter|test_interval|snapshot|stepvalue|test_iter): (\d+)$",
                            re.M)
        cases = [
            ("train_lenet_ddl.sh", ["-n", "4"], {},
             {"max_iter": "500", "test_interval": "125", "snapshot": "1250", "test_iter": "3"}),
            # 2000 / 3 = 667 steps, rounded up to whole test intervals of 167: 668.
            ("train_lenet_ddl.sh", ["-n", "3"], {},
             {"max_iter": "668", "test_interval": "167", "snapshot": "1667", "test_iter": "3"}),
            ("train_lenet_ddl.sh", ["-n", "2"], {"ITERS": "10", "TEST_ITER": "1"},
             {"max_iter": "10", "test_interval": "10", "snapshot": "2500", "test_iter": "1"}),
            # The learning rate drops after 4000 / 4 steps instead of 4000.
            ("train_cifar10_quick_ddl.sh", ["-n", "4"], {},
             {"max_iter": "1250", "test_interval": "125", "snapshot": "1250", "stepvalue": "1000",
              "test_iter": "100"}),
        ]
        for script, args, variables, expected in cases:
            status, log = self.run_script("examples/ddl/" + script, *args,
                                          MPIRUN=os.path.join(shim, "mpirun"), **variables)
            self.assertEqual(status, 0, log)
            self.assertEqual(dict(fields.findall(log)), expected, (args, variables))
        self.assertEqual(self.leftovers(), [])

    def test_mistakes_are_one_line(self):
        lenet = "examples/ddl/train_lenet_ddl.sh"
        status, log = self.run_script(lenet)
        self.assertOneLineError(status, log, "train_lenet_ddl.sh: error: "
                                "examples/mnist/digits_train_lmdb not found: run "
                                "data/digits/get_digits.sh, then examples/mnist/create_digits.sh")
        for folder in ("digits_train_lmdb", "digits_test_lmdb"):
            os.makedirs(os.path.join(self.root, "examples", "mnist", folder))
        rank_file = os.path.join(self.root, "2x1.rf")
        with open(rank_file, "w") as out:
            out.write("#dims = 2x1x1\nrank 0=a slot=0:0\nrank 1=a slot=0:1\n")
        cases = [
            (["-n", "0"], {}, "-n '0' is not a whole number >= 1"),
            (["-n"], {}, "-n needs a value"),
            (["-rf", "none.rf"], {}, "rank file none.rf cannot be read"),
            (["-rf", rank_file, "-n", "4"], {}, "-n 4, but rank file %s places 2" % rank_file),
            ([], {"ITERS": "ten"}, "ITERS 'ten' is not a whole number >= 1"),
            ([], {"MPIRUN": "no-such-mpirun"}, "no-such-mpirun not found: install Open MPI"),
        ]
        for args, variables, message in cases:
            status, log = self.run_script(lenet, *args, **variables)
            self.assertOneLineError(status, log, "train_lenet_ddl.sh: error: " + message)
        self.assertEqual(self.leftovers(), [])


class LmsExampleTest(ScratchRoot):

    def setUp(self):
        super().setUp()
        self.copy("examples/lms/time_lms.sh", "examples/lms/resize_input.sh",
                  "models/bvlc_googlenet/deploy.prototxt", "models/unet3d/deploy.prototxt")

    def test_googlenet_resized_and_timed_on_the_cpu(self):
        need_caffe(self)
        status, log = self.run_script("examples/lms/time_lms.sh", "googlenet", "-batch", "1",
                                      "-size", "256", "-cpu")
        self.assertEqual(status, 0, log)
        net = "examples/lms/googlenet_1x256.prototxt"
        self.assertIn(" time -model %s -lms 8192 -lms_frac 0.9 -iterations 1\n" % net, log)
        with open(os.path.join(self.root, net)) as text:
            self.assertIn("input_param { shape: { dim: 1 dim: 3 dim: 256 dim: 256 } }",
                          text.read())
        self.assertIn("Top shape: 1 3 256 256", log)
        self.assertIn("[LMS] -lms, -lms_frac and -gpu_mem_limit apply to GPU runs", log)
        self.assertRegex(log, r"Average Forward-Backward: [0-9.]+ ms")

    def test_unet3d_resized_and_timed_on_the_cpu(self):
        need_caffe(self)
        status, log = self.run_script("examples/lms/time_lms.sh", "unet3d", "-size", "16",
                                      "-cpu", "-lms", "0")
        self.assertEqual(status, 0, log)
        self.assertIn("Top shape: 1 1 16 16 16", log)
        self.assertIn("Top shape: 1 3 16 16 16", log)  # the scores, at the input's size
        self.assertIn("-iterations 1 -lms 0\n", log)
        self.assertRegex(log, r"Average Forward-Backward: [0-9.]+ ms")

    def test_mistakes_are_one_line(self):
        cases = [
            (["unet3d", "-size", "0"], "resize_input.sh: error: dim '0' is not a whole number"),
            (["vgg16"], "time_lms.sh: error: the first argument names the net: googlenet or "
                        "unet3d (got 'vgg16')"),
            (["googlenet", "-batch"], "time_lms.sh: error: -batch needs a value"),
        ]
        for args, message in cases:
            status, log = self.run_script("examples/lms/time_lms.sh", *args)
            self.assertOneLineError(status, log, message)
        status, log = self.run_script("examples/lms/resize_input.sh",
                                      "models/unet3d/deploy.prototxt", "out.prototxt", "1", "1",
                                      "32", "32")
        self.assertOneLineError(status, log, "resize_input.sh: error: the first Input layer of "
                                "models/unet3d/deploy.prototxt has 5 dims; 4 were given")
        self.assertFalse(os.path.exists(os.path.join(self.root, "out.prototxt")))


if __name__ == "__main__":
    unittest.main()
