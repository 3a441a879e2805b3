#!/usr/bin/env python3
"""check_rooms.py: the checkout as it is passes; a copy of its library with one include that goes
up a room (memory/ into lms/, util/ into a layer), a getenv outside util/environment.cpp, or an
oversized file fails, naming the file and line."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CHECK = os.path.join(HERE, "check_rooms.py")


def run(root):
    return subprocess.run([sys.executable, CHECK, root], capture_output=True, text=True)


class CheckRoomsTest(unittest.TestCase):
    def setUp(self):
        self.tree = tempfile.mkdtemp(prefix="check_rooms_")
        for top in ("include/caffe", "src/caffe"):
            shutil.copytree(os.path.join(ROOT, top), os.path.join(self.tree, top),
                            ignore=shutil.ignore_patterns("test"))

    def tearDown(self):
        shutil.rmtree(self.tree)

    def append(self, path, text):
        with open(os.path.join(self.tree, path), "a", encoding="utf-8") as out:
            out.write(text)

    def test_the_checkout_holds(self):
        result = run(ROOT)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def test_memory_including_lms_fails(self):
        self.append("src/caffe/memory/syncedmem.cpp", '#include "caffe/lms/memory_manager.hpp"\n')
        result = run(self.tree)
        self.assertEqual(result.returncode, 1)
        self.assertIn("src/caffe/memory/syncedmem.cpp", result.stdout)
        self.assertIn("room memory includes caffe/lms/memory_manager.hpp of room lms", result.stdout)

    def test_util_including_a_layer_fails(self):
        self.append("include/caffe/util/benchmark.hpp", '#include "caffe/layers/relu_layer.hpp"\n')
        result = run(self.tree)
        self.assertEqual(result.returncode, 1)
        self.assertIn("room base includes caffe/layers/relu_layer.hpp of room layers", result.stdout)

    def test_a_base_layer_including_its_engine_fails(self):
        self.append("src/caffe/layers/relu_layer.cpp",
                    '#include "caffe/layers/cudnn/cudnn_relu_layer.hpp"\n')
        result = run(self.tree)
        self.assertEqual(result.returncode, 1)
        self.assertIn("room layers includes caffe/layers/cudnn/cudnn_relu_layer.hpp", result.stdout)

    def test_reading_the_environment_elsewhere_fails(self):
        self.append("src/caffe/net.cpp", 'const char* value = std::getenv("CAFFE_X");\n')
        result = run(self.tree)
        self.assertEqual(result.returncode, 1)
        self.assertIn("src/caffe/net.cpp", result.stdout)
        self.assertIn("reads the environment", result.stdout)

    def test_a_file_over_the_limit_fails(self):
        self.append("src/caffe/blob.cpp", "// padding\n" * 900)
        result = run(self.tree)
        self.assertEqual(result.returncode, 1)
        self.assertIn("src/caffe/blob.cpp:", result.stdout)
        self.assertIn("the limit is 800", result.stdout)


if __name__ == "__main__":
    unittest.main()
