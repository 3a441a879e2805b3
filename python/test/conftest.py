"""Shared set-up for pycaffe's tests (run by ctest as `pycaffe`, or by hand:
PYTHONPATH=build/python python3 -m pytest python/test). Paths come from the environment ctest
sets: CAFFE_SOURCE_DIR (the repository), CAFFE_BINARY_DIR (the build, for its tools) and
CAFFE_SHARED_DIR (the golden fixtures; default: ../shared next to the repository)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import caffe
from caffe import layers as L, params as P

SOURCE_DIR = os.environ.get('CAFFE_SOURCE_DIR',
                            os.path.dirname(os.path.dirname(os.path.dirname(
                                os.path.abspath(__file__)))))
BINARY_DIR = os.environ.get('CAFFE_BINARY_DIR', os.path.join(SOURCE_DIR, 'build'))
SHARED_DIR = os.environ.get('CAFFE_SHARED_DIR', os.path.join(SOURCE_DIR, '..', 'shared'))
TEST_DIR = os.path.dirname(os.path.abspath(__file__))
# BVLC's example Python layers (module 'pyloss'), which the tests use as users do.
sys.path.insert(0, os.path.join(SOURCE_DIR, 'examples', 'pycaffe', 'layers'))


@pytest.fixture(autouse=True)
def cpu_mode():
    caffe.set_mode_cpu()
    caffe.init_log(1)  # warnings and errors only: net set-up logs are long
    yield


@pytest.fixture
def golden_dir():
    folder = os.path.join(SHARED_DIR, 'fixtures', 'golden')
    if not os.path.isdir(folder):
        pytest.skip('golden fixtures not found at {} (set CAFFE_SHARED_DIR)'.format(folder))
    return folder


def write_file(path, text):
    with open(str(path), 'w') as output:
        output.write(text)
    return str(path)


def lenet_layers(n, hidden='ip1', score='ip2'):
    """Adds BVLC's LeNet from n.data to its ten scores (xavier fillers, as examples/mnist and the
    "Learning LeNet" notebook write it), naming the fully connected layers `hidden` and `score`;
    returns the scores' top."""
    n.conv1 = L.Convolution(n.data, kernel_size=5, num_output=20,
                            weight_filler=dict(type='xavier'))
    n.pool1 = L.Pooling(n.conv1, kernel_size=2, stride=2, pool=P.Pooling.MAX)
    n.conv2 = L.Convolution(n.pool1, kernel_size=5, num_output=50,
                            weight_filler=dict(type='xavier'))
    n.pool2 = L.Pooling(n.conv2, kernel_size=2, stride=2, pool=P.Pooling.MAX)
    setattr(n, hidden, L.InnerProduct(n.pool2, num_output=500, weight_filler=dict(type='xavier')))
    n.relu1 = L.ReLU(getattr(n, hidden), in_place=True)
    setattr(n, score, L.InnerProduct(n.relu1, num_output=10, weight_filler=dict(type='xavier')))
    return getattr(n, score)


def mnist_lmdb(path, images, labels):
    """Writes `images` (N x H x W, uint8) and `labels` as MNIST idx files beside `path` and turns
    them into an LMDB at `path` with the build's convert_mnist_data; returns `path`."""
    images = np.asarray(images, np.uint8)
    count, height, width = images.shape
    prefix = str(path) + '.idx'
    with open(prefix + '-images', 'wb') as out:
        out.write(np.array([2051, count, height, width], '>u4').tobytes() + images.tobytes())
    with open(prefix + '-labels', 'wb') as out:
        out.write(np.array([2049, count], '>u4').tobytes() +
                  np.asarray(labels, np.uint8).tobytes())
    subprocess.run([os.path.join(BINARY_DIR, 'bin', 'convert_mnist_data'), prefix + '-images',
                    prefix + '-labels', str(path), '--backend=lmdb'],
                   check=True, capture_output=True)
    return str(path)


def write_digits_lmdb(folder, count):
    """`count` 28x28 images (MNIST's idx files), pixels (k * 37 + p * 11 + (k % 10) * p) % 256 as
    DDL's C++ tests write them (ddl_test_util.hpp), label k % 10, turned into an LMDB by
    convert_mnist_data; returns its path."""
    pixels = [(k * 37 + p * 11 + (k % 10) * p) % 256 for k in range(count) for p in range(28 * 28)]
    return mnist_lmdb(os.path.join(str(folder), 'digits_lmdb'),
                      np.array(pixels).reshape(count, 28, 28), np.arange(count) % 10)
