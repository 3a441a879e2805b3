"""examples/hdf5_classification, BVLC's "Brewing Logistic Regression" example: make_data.py
writes the HDF5 files, pycaffe's NetSpec writes the shipped nets byte for byte, `caffe train`
runs both solvers from a scratch copy of the repository root, logistic regression scores what a
plain numpy logistic regression scores on the same data, the hidden layer beats it clearly, and
the notebook's Python flow (get_solver, solve, the test net's accuracy) gives the same figure."""
import os
import re
import shutil
import subprocess
import sys

import h5py
import numpy as np
import pytest

import caffe
from caffe import layers as L
from conftest import BINARY_DIR, SOURCE_DIR

EXAMPLE = os.path.join('examples', 'hdf5_classification')
NET_FILES = ['logreg_auto_train.prototxt', 'logreg_auto_test.prototxt',
             'nonlinear_auto_train.prototxt', 'nonlinear_auto_test.prototxt']


def logreg(hdf5, batch_size):
    """The notebook's logistic regression."""
    n = caffe.NetSpec()
    n.data, n.label = L.HDF5Data(batch_size=batch_size, source=hdf5, ntop=2)
    n.ip1 = L.InnerProduct(n.data, num_output=2, weight_filler=dict(type='xavier'))
    n.accuracy = L.Accuracy(n.ip1, n.label)
    n.loss = L.SoftmaxWithLoss(n.ip1, n.label)
    return n.to_proto()


def nonlinear(hdf5, batch_size):
    """The notebook's net with one hidden layer of 40 ReLUs."""
    n = caffe.NetSpec()
    n.data, n.label = L.HDF5Data(batch_size=batch_size, source=hdf5, ntop=2)
    n.ip1 = L.InnerProduct(n.data, num_output=40, weight_filler=dict(type='xavier'))
    n.relu1 = L.ReLU(n.ip1, in_place=True)
    n.ip2 = L.InnerProduct(n.ip1, num_output=2, weight_filler=dict(type='xavier'))
    n.accuracy = L.Accuracy(n.ip2, n.label)
    n.loss = L.SoftmaxWithLoss(n.ip2, n.label)
    return n.to_proto()


@pytest.fixture
def root(tmp_path):
    """A scratch repository root holding the example's files and its data, the working
    directory of the example's commands."""
    shutil.copytree(os.path.join(SOURCE_DIR, EXAMPLE), str(tmp_path / EXAMPLE),
                    ignore=shutil.ignore_patterns('data'))
    subprocess.run([sys.executable, os.path.join(EXAMPLE, 'make_data.py')], check=True,
                   cwd=str(tmp_path), capture_output=True)
    cwd = os.getcwd()
    os.chdir(str(tmp_path))
    yield tmp_path
    os.chdir(cwd)


def caffe_tool(*args):
    tool = os.path.join(BINARY_DIR, 'bin', 'caffe')
    if not os.path.exists(tool):
        pytest.skip('caffe not built at {} (CAFFE_BINARY_DIR)'.format(tool))
    run = subprocess.run([tool] + list(args), capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stderr


def last_accuracy(log, prefix):
    found = re.findall(prefix + r'accuracy = ([0-9.e+-]+)', log)
    assert found, log[-2000:]
    return float(found[-1])


def numpy_logistic_regression_accuracy(folder):
    """Full-batch gradient descent on the training file, scored on the test file: the baseline
    the notebook takes from scikit-learn."""
    with h5py.File(os.path.join(folder, 'train.h5'), 'r') as train:
        x, y = train['data'][()].astype(np.float64), train['label'][()]
    with h5py.File(os.path.join(folder, 'test.h5'), 'r') as test:
        x_test, y_test = test['data'][()], test['label'][()]
    w, b = np.zeros(x.shape[1]), 0.0
    for _ in range(2000):
        gradient = 1 / (1 + np.exp(-(x @ w + b))) - y
        w -= 0.5 * x.T @ gradient / len(y)
        b -= 0.5 * gradient.mean()
    return np.mean((x_test @ w + b > 0) == y_test)


def test_make_data_writes_both_splits_and_their_lists(root):
    folder = root / EXAMPLE / 'data'
    for split, rows in (('train', 7500), ('test', 2500)):
        path = str(folder / (split + '.h5'))
        assert (folder / (split + '.txt')).read_text() == path + '\n'
        with h5py.File(path, 'r') as data:
            assert data['data'].shape == (rows, 4) and data['data'].dtype == np.float32
            assert data['label'].shape == (rows,)
            assert set(np.unique(data['label'][()])) == {0.0, 1.0}
            assert data['data'].compression == ('gzip' if split == 'test' else None)
    bad = subprocess.run([sys.executable, os.path.join(EXAMPLE, 'make_data.py'), '--samples',
                          '2'], capture_output=True, text=True)
    assert bad.returncode != 0
    assert bad.stderr.strip() == 'make_data.py: error: --samples must be at least 4, not 2'


def test_netspec_writes_the_shipped_nets(root):
    for name in NET_FILES:
        kind, _, split = name[:-len('.prototxt')].split('_')
        net = (logreg if kind == 'logreg' else nonlinear)(
            'examples/hdf5_classification/data/{}.txt'.format(split), 10)
        with open(os.path.join(SOURCE_DIR, EXAMPLE, name)) as shipped:
            assert str(net) == shipped.read(), name


def test_the_solvers_train_and_the_hidden_layer_beats_the_line(root):
    linear_log = caffe_tool('train', '-solver', os.path.join(EXAMPLE, 'solver.prototxt'))
    deep_log = caffe_tool('train', '-solver', os.path.join(EXAMPLE, 'nonlinear_solver.prototxt'))
    linear = last_accuracy(linear_log, 'Test net output #0: ')
    deep = last_accuracy(deep_log, 'Test net output #0: ')
    baseline = numpy_logistic_regression_accuracy(str(root / EXAMPLE / 'data'))
    assert abs(linear - baseline) < 0.02, (linear, baseline)
    assert deep > linear + 0.1, (linear, deep)
    # The one-file nets take the snapshots and score the test set alike.
    for net, weights, accuracy in (('train_val', 'train', linear),
                                   ('nonlinear_train_val', 'nonlinear', deep)):
        log = caffe_tool('test', '-model', os.path.join(EXAMPLE, net + '.prototxt'), '-weights',
                         os.path.join(EXAMPLE, 'data', weights + '_iter_10000.caffemodel'),
                         '-iterations', '250')
        assert last_accuracy(log, r'\] ') == pytest.approx(accuracy, abs=1e-6)


def test_the_notebooks_python_flow(root):
    for split in ('train', 'test'):
        with open(os.path.join(EXAMPLE, 'logreg_auto_{}.prototxt'.format(split)), 'w') as f:
            f.write(str(logreg('examples/hdf5_classification/data/{}.txt'.format(split), 10)))
    solver = caffe.get_solver(os.path.join(EXAMPLE, 'solver.prototxt'))
    solver.solve()
    assert solver.iter == 10000
    accuracy = 0
    for _ in range(250):
        solver.test_nets[0].forward()
        accuracy += solver.test_nets[0].blobs['accuracy'].data
    baseline = numpy_logistic_regression_accuracy(str(root / EXAMPLE / 'data'))
    assert abs(accuracy / 250 - baseline) < 0.02, (accuracy / 250, baseline)
