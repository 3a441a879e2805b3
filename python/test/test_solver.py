"""Training from Python: a NetSpec-written LeNet learns through SGDSolver.step; every solver
class is reachable; snapshot / restore round-trips; callbacks run; share_weights gives a net
the solver's weights."""
import os

import numpy as np
import pytest

import caffe
from caffe import layers as L
from caffe.proto import caffe_pb2
from conftest import lenet_layers, write_file


def lenet(batch_size):
    """BVLC's LeNet (examples/mnist), fed from memory."""
    n = caffe.NetSpec()
    n.data, n.label = L.MemoryData(batch_size=batch_size, channels=1, height=28, width=28,
                                   ntop=2)
    lenet_layers(n)
    n.loss = L.SoftmaxWithLoss(n.ip2, n.label)
    n.accuracy = L.Accuracy(n.ip2, n.label)
    return n.to_proto()


def digit_like_data(count, seed=0):
    """Ten 28x28 class templates (random strokes), each item a template plus noise."""
    rng = np.random.RandomState(seed)
    templates = (rng.rand(10, 28, 28) > 0.8).astype(np.float32)
    labels = np.arange(count) % 10
    data = templates[labels] + 0.3 * rng.randn(count, 28, 28)
    return data[:, np.newaxis].astype(np.float32), labels.astype(np.float32)


def regression_net(tmp_path):
    """A 3 -> 2 InnerProduct fitting constant targets from DummyData; returns its path."""
    n = caffe.NetSpec()
    n.x, n.t = L.DummyData(shape=[dict(dim=[4, 3]), dict(dim=[4, 2])],
                           data_filler=[dict(type='gaussian'), dict(type='constant', value=1)],
                           ntop=2)
    n.ip = L.InnerProduct(n.x, num_output=2, weight_filler=dict(type='gaussian', std=0.1))
    n.loss = L.EuclideanLoss(n.ip, n.t)
    return write_file(tmp_path / 'net.prototxt', str(n.to_proto()))


def write_solver(tmp_path, net_path, **fields):
    solver = caffe_pb2.SolverParameter()
    solver.train_net = net_path
    solver.base_lr = 0.01
    solver.momentum = 0.9
    solver.weight_decay = 5e-4
    solver.lr_policy = 'inv'
    solver.gamma = 1e-4
    solver.power = 0.75
    solver.display = 0
    solver.max_iter = 1000
    solver.random_seed = 1701
    solver.snapshot_prefix = str(tmp_path / 'snap')
    for key, value in fields.items():
        if isinstance(value, list):
            getattr(solver, key).extend(value)  # repeated: test_net, test_iter
        else:
            setattr(solver, key, value)
    return write_file(tmp_path / 'solver.prototxt', str(solver))


def evaluate(net, batches):
    losses, accuracies = [], []
    for _ in range(batches):
        out = net.forward()
        losses.append(float(out['loss']))
        accuracies.append(float(out['accuracy']))
    return np.mean(losses), np.mean(accuracies)


def test_netspec_lenet_trains_with_sgd_solver_step(tmp_path):
    net_path = write_file(tmp_path / 'lenet.prototxt', str(lenet(batch_size=20)))
    solver = caffe.SGDSolver(write_solver(tmp_path, net_path))
    assert isinstance(solver, caffe.SGDSolver) and solver.type == 'SGD'
    assert solver.param.base_lr == pytest.approx(0.01) and solver.test_nets == []
    data, labels = digit_like_data(200)
    solver.net.set_input_arrays(data, labels)
    initial_loss, initial_accuracy = evaluate(solver.net, 10)
    solver.step(60)
    assert solver.iter == 60
    loss, accuracy = evaluate(solver.net, 10)
    assert loss < initial_loss / 4, (initial_loss, loss)
    assert accuracy >= 0.9 and accuracy > initial_accuracy + 0.5, (initial_accuracy, accuracy)
    # The solver's net is the net Python sees: its params are the trained ones.
    assert solver.net.params['conv1'][0].data.shape == (20, 1, 5, 5)


def test_snapshot_and_restore_round_trip(tmp_path):
    net_path = write_file(tmp_path / 'lenet.prototxt', str(lenet(batch_size=10)))
    solver_path = write_solver(tmp_path, net_path)
    data, labels = digit_like_data(40)
    solver = caffe.get_solver(solver_path)
    assert type(solver) is caffe.SGDSolver
    solver.net.set_input_arrays(data, labels)
    solver.step(3)
    solver.snapshot()
    state = str(tmp_path / 'snap_iter_3.solverstate')
    assert os.path.exists(state) and os.path.exists(str(tmp_path / 'snap_iter_3.caffemodel'))
    resumed = caffe.SGDSolver(solver_path)
    resumed.net.set_input_arrays(data, labels)
    resumed.restore(state)
    assert resumed.iter == 3
    for layer in solver.net.params:
        for ours, theirs in zip(resumed.net.params[layer], solver.net.params[layer]):
            np.testing.assert_array_equal(ours.data, theirs.data)


SOLVER_SETTINGS = {
    'Nesterov': (caffe.NesterovSolver, {}),
    'AdaGrad': (caffe.AdaGradSolver, {'momentum': 0}),
    'RMSProp': (caffe.RMSPropSolver, {'momentum': 0, 'rms_decay': 0.98}),
    'AdaDelta': (caffe.AdaDeltaSolver, {'momentum': 0.95, 'delta': 1e-6, 'base_lr': 1.0}),
    'Adam': (caffe.AdamSolver, {'momentum': 0.9, 'momentum2': 0.999, 'delta': 1e-8}),
}


@pytest.mark.parametrize('solver_type', sorted(SOLVER_SETTINGS))
def test_every_solver_class_steps(tmp_path, solver_type):
    n = caffe.NetSpec()
    n.x = L.DummyData(shape=dict(dim=[4, 3]), data_filler=dict(type='gaussian'))
    n.t = L.DummyData(shape=dict(dim=[4, 2]), data_filler=dict(type='constant', value=1))
    n.ip = L.InnerProduct(n.x, num_output=2, weight_filler=dict(type='gaussian', std=0.1))
    n.loss = L.EuclideanLoss(n.ip, n.t)
    net_path = write_file(tmp_path / 'net.prototxt', str(n.to_proto()))
    solver_class, fields = SOLVER_SETTINGS[solver_type]
    fields = dict(fields, type=solver_type, lr_policy='fixed')
    path = write_solver(tmp_path, net_path, **fields)
    for solver in (caffe.get_solver(path), solver_class(path)):
        assert type(solver) is solver_class and isinstance(solver, caffe.Solver)
        before = solver.net.params['ip'][0].data.copy()
        solver.step(3)
        assert solver.iter == 3
        assert not np.array_equal(before, solver.net.params['ip'][0].data)


def test_callbacks_run_each_iteration(tmp_path):
    n = caffe.NetSpec()
    n.x = L.DummyData(shape=dict(dim=[2, 3]), data_filler=dict(type='gaussian'))
    n.ip = L.InnerProduct(n.x, num_output=1)
    n.loss = L.Reduction(n.ip, loss_weight=1)
    solver = caffe.SGDSolver(write_solver(tmp_path, write_file(tmp_path / 'n.prototxt',
                                                               str(n.to_proto()))))
    calls = []
    solver.add_callback(lambda: calls.append('start'), lambda: calls.append('gradients'))
    solver.step(2)
    assert calls == ['start', 'gradients'] * 2


def test_solver_errors_are_caffe_errors(tmp_path):
    with pytest.raises(caffe.Error, match='missing_solver.prototxt'):
        caffe.get_solver(str(tmp_path / 'missing_solver.prototxt'))
    path = write_file(tmp_path / 's.prototxt', "type: 'Bogus' train_net: 'x.prototxt'")
    with pytest.raises(caffe.Error):
        caffe.get_solver(path)


def test_solve_runs_to_max_iter_and_tests_the_shared_weights(tmp_path):
    net_path = regression_net(tmp_path)
    path = write_solver(tmp_path, net_path, test_net=[net_path], test_iter=[1],
                        test_interval=5, max_iter=10, lr_policy='fixed')
    solver = caffe.get_solver(path)
    assert len(solver.test_nets) == 1
    test_net = solver.test_nets[0]
    assert test_net._phase == caffe.TEST
    solver.solve()
    assert solver.iter == 10
    # The test net reads the training net's weights (shared, not copied).
    np.testing.assert_array_equal(test_net.params['ip'][0].data,
                                  solver.net.params['ip'][0].data)
    solver.net.params['ip'][1].data[...] = 42
    assert np.all(test_net.params['ip'][1].data == 42)
    assert os.path.exists(str(tmp_path / 'snap_iter_10.caffemodel'))  # snapshot after train


def test_share_weights_gives_a_net_the_solvers_weights(tmp_path):
    net_path = regression_net(tmp_path)
    solver = caffe.get_solver(write_solver(tmp_path, net_path, max_iter=7,
                                           lr_policy='fixed'))
    assert solver.max_iter == 7
    deploy = caffe.Net(net_path, caffe.TEST)
    assert not np.array_equal(deploy.params['ip'][0].data, solver.net.params['ip'][0].data)
    solver.share_weights(deploy)
    solver.step(3)
    # The same memory: what the solver learns, the net has.
    np.testing.assert_array_equal(deploy.params['ip'][0].data, solver.net.params['ip'][0].data)
    deploy.params['ip'][1].data[...] = 5
    assert np.all(solver.net.params['ip'][1].data == 5)
    with pytest.raises(TypeError):
        solver.share_weights('not a net')
