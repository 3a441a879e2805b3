"""Shared set-up for pycaffe's tests (run by ctest as `pycaffe`, or by hand:
PYTHONPATH=build/python python3 -m pytest python/test). Paths come from the environment ctest
sets: CAFFE_SOURCE_DIR (the repository), CAFFE_BINARY_DIR (the build, for its tools) and
CAFFE_SHARED_DIR (the golden fixtures; default: ../shared next to the repository)."""
import os

import pytest

import caffe

SOURCE_DIR = os.environ.get('CAFFE_SOURCE_DIR',
                            os.path.dirname(os.path.dirname(os.path.dirname(
                                os.path.abspath(__file__)))))
BINARY_DIR = os.environ.get('CAFFE_BINARY_DIR', os.path.join(SOURCE_DIR, 'build'))
SHARED_DIR = os.environ.get('CAFFE_SHARED_DIR', os.path.join(SOURCE_DIR, '..', 'shared'))
TEST_DIR = os.path.dirname(os.path.abspath(__file__))


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
