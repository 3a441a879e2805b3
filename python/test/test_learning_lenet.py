"""BVLC's "Learning LeNet" notebook (examples/01-learning-lenet.ipynb), step by step on a small
generated MNIST: NetSpec writes mnist/lenet_auto_train.prototxt and lenet_auto_test.prototxt,
examples/mnist/lenet_auto_solver.prototxt (BVLC's file) trains them from the examples folder,
the notebook's inspection and manual training loop run as written, and a SolverParameter built in
Python with a random_seed starts from the same weights every time."""
import os
import shutil

import numpy as np
import pytest

import caffe
from caffe import layers as L, params as P
from caffe.proto import caffe_pb2
from conftest import BINARY_DIR, SOURCE_DIR, lenet_layers, mnist_lmdb, write_file


def lenet(lmdb, batch_size):
    """The notebook's LeNet: Data from an LMDB, scaled to [0, 1]."""
    n = caffe.NetSpec()
    n.data, n.label = L.Data(batch_size=batch_size, backend=P.Data.LMDB, source=lmdb,
                             transform_param=dict(scale=1. / 255), ntop=2)
    lenet_layers(n, hidden='fc1', score='score')
    n.loss = L.SoftmaxWithLoss(n.score, n.label)
    return n.to_proto()


def digit_like(count, seed):
    """`count` digit-like 28 x 28 images and their labels: ten stroke templates plus noise."""
    templates = np.random.RandomState(7).rand(10, 28, 28) > 0.8
    rng = np.random.RandomState(seed)
    labels = np.arange(count) % 10
    images = np.clip(templates[labels] * 200 + rng.randn(count, 28, 28) * 40, 0, 255)
    return images.astype(np.uint8), labels


@pytest.fixture
def examples_dir(tmp_path):
    """A scratch examples/ folder, the notebook's working directory: mnist/ holds the LMDBs and
    BVLC's lenet_auto_solver.prototxt."""
    mnist = tmp_path / 'mnist'
    mnist.mkdir()
    converter = os.path.join(BINARY_DIR, 'bin', 'convert_mnist_data')
    if not os.path.exists(converter):
        pytest.skip('convert_mnist_data not built at {} (CAFFE_BINARY_DIR)'.format(converter))
    for split, count, seed in (('train', 600, 1), ('test', 300, 2)):
        mnist_lmdb(mnist / 'mnist_{}_lmdb'.format(split), *digit_like(count, seed))
    shutil.copy(os.path.join(SOURCE_DIR, 'examples', 'mnist', 'lenet_auto_solver.prototxt'),
                str(mnist))
    write_file(mnist / 'lenet_auto_train.prototxt', str(lenet('mnist/mnist_train_lmdb', 64)))
    write_file(mnist / 'lenet_auto_test.prototxt', str(lenet('mnist/mnist_test_lmdb', 100)))
    cwd = os.getcwd()
    os.chdir(str(tmp_path))
    yield tmp_path
    os.chdir(cwd)


def test_the_notebook_trains_lenet(examples_dir):
    solver = caffe.SGDSolver('mnist/lenet_auto_solver.prototxt')

    # The notebook's listing of blob and parameter shapes.
    assert [(k, v.data.shape) for k, v in solver.net.blobs.items()] == [
        ('data', (64, 1, 28, 28)), ('label', (64,)), ('conv1', (64, 20, 24, 24)),
        ('pool1', (64, 20, 12, 12)), ('conv2', (64, 50, 8, 8)), ('pool2', (64, 50, 4, 4)),
        ('fc1', (64, 500)), ('score', (64, 10)), ('loss', ())]
    assert [(k, v[0].data.shape) for k, v in solver.net.params.items()] == [
        ('conv1', (20, 1, 5, 5)), ('conv2', (50, 20, 5, 5)), ('fc1', (500, 800)),
        ('score', (10, 500))]

    solver.net.forward()
    solver.test_nets[0].forward()
    images = solver.net.blobs['data'].data[:8, 0].transpose(1, 0, 2).reshape(28, 8 * 28)
    assert 0 <= images.min() and images.max() <= 1
    assert list(solver.net.blobs['label'].data[:8]) == list(range(8))
    solver.step(1)
    filters = solver.net.params['conv1'][0].diff[:, 0].reshape(4, 5, 5, 5) \
        .transpose(0, 2, 1, 3).reshape(4 * 5, 5 * 5)
    assert np.abs(filters).sum() > 0

    # The notebook's training loop, shortened: 60 steps, the test set scored every 20.
    niter, test_interval, test_batches = 60, 20, 3
    train_loss = np.zeros(niter)
    test_acc = np.zeros(int(np.ceil(niter / test_interval)) + 1)
    output = np.zeros((niter, 8, 10))
    test_net = solver.test_nets[0]

    def score_test_set():
        correct = 0
        for _ in range(test_batches):
            test_net.forward()
            correct += sum(test_net.blobs['score'].data.argmax(1) == test_net.blobs['label'].data)
        return correct / (100. * test_batches)

    for it in range(niter):
        solver.step(1)
        train_loss[it] = solver.net.blobs['loss'].data
        test_net.forward(start='conv1')  # the batch already in 'data', through the new weights
        output[it] = test_net.blobs['score'].data[:8]
        if it % test_interval == 0:
            test_acc[it // test_interval] = score_test_set()
    test_acc[-1] = score_test_set()

    assert solver.iter == niter + 1
    assert train_loss[-10:].mean() < 0.5 * train_loss[:5].mean(), train_loss
    assert test_acc[-1] > 0.9, test_acc
    assert test_acc[-1] > test_acc[0], test_acc
    # The scores of the eight fixed test images move as the weights learn.
    assert not np.allclose(output[0], output[-1])


def test_a_solver_written_from_python_is_reproducible(examples_dir):
    s = caffe_pb2.SolverParameter()
    s.random_seed = 0xCAFFE
    s.train_net = 'mnist/lenet_auto_train.prototxt'
    s.test_net.append('mnist/lenet_auto_test.prototxt')
    s.test_interval = 500
    s.test_iter.append(100)
    s.max_iter = 10000
    s.type = 'Adam'
    s.base_lr = 0.001
    s.momentum = 0.9
    s.momentum2 = 0.999
    s.weight_decay = 5e-4
    s.lr_policy = 'inv'
    s.gamma = 0.0001
    s.power = 0.75
    s.display = 1000
    s.snapshot = 5000
    s.snapshot_prefix = 'mnist/custom_net'
    s.solver_mode = caffe_pb2.SolverParameter.CPU
    write_file('mnist/custom_solver.prototxt', str(s))

    runs = []
    for _ in range(2):
        solver = caffe.get_solver('mnist/custom_solver.prototxt')
        assert type(solver).__name__ == 'AdamSolver'
        start = solver.net.params['conv1'][0].data.copy()
        solver.step(3)
        runs.append((start, solver.net.params['conv1'][0].data.copy()))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
    assert not np.array_equal(runs[0][0], runs[0][1])
