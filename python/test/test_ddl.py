"""caffe.ddl: DDL from Python, its learners run by mpirun (`mpirun --oversubscribe -n 2 python3
ddl_learner.py ...`, one OpenMP thread each). A solver.step(1) loop, and solver.solve(), with
caffe.ddl.attach end with the weights of `caffe train -ddl "-mode r:2"` on the same data, solver
and seed; bcast and bcast_net give every learner root's values; allreduce sums and averages;
misuse is one line, on every learner (before init, after it, after finalize; a -mode that does
not fit the job; a build without MPI); an uncaught exception on one learner ends the job.
Also examples/pycaffe/ddl_train.py on generated digits. The ctest is pycaffe_ddl (labels cpu,
mpi), apart from the pycaffe suite."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import caffe
from caffe import layers as L, params as P
from caffe.proto import caffe_pb2
from conftest import (BINARY_DIR, SOURCE_DIR, TEST_DIR, lenet_layers, mnist_lmdb,
                      write_digits_lmdb, write_file)

BATCH = 4
ITERATIONS = 6
MPIRUN = os.environ.get('CAFFE_MPIEXEC') or shutil.which('mpirun')
needs_mpi = pytest.mark.skipif(not caffe.has_mpi() or not MPIRUN,
                               reason='this build has no MPI, or mpirun is not installed')

SOLVER = """net: "{net}"
base_lr: 0.01 momentum: 0.9 weight_decay: 0.0005 lr_policy: "fixed"
max_iter: {iterations} random_seed: 1701 solver_mode: CPU
snapshot_prefix: "{prefix}"
"""


def mpirun(args, timeout=120, processes=2):
    """`mpirun --oversubscribe -n processes args`: (exit code, output, seconds)."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1',
               OMP_NUM_THREADS='1', PYTHONDONTWRITEBYTECODE='1')
    start = time.time()
    result = subprocess.run([MPIRUN, '--oversubscribe', '-n', str(processes)] + args, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout,
                            check=False)
    return result.returncode, result.stdout.decode(errors='replace'), time.time() - start


def learners(scenario, folder, *args, timeout=120):
    """Runs ddl_learner.py's `scenario` as 2 learners; returns each one's results, by rank."""
    code, output, _ = mpirun([sys.executable, os.path.join(TEST_DIR, 'ddl_learner.py'),
                              scenario, str(folder)] + [str(a) for a in args], timeout=timeout)
    assert code == 0, output
    results = []
    for rank in range(2):
        with open(os.path.join(str(folder), '{}.rank{}.json'.format(scenario, rank))) as file:
            result = json.load(file)
        npz = os.path.join(str(folder), '{}.rank{}.npz'.format(scenario, rank))
        result['arrays'] = dict(np.load(npz)) if os.path.exists(npz) else {}
        results.append(result)
    return results


def lenet(folder, name, source):
    """BVLC's LeNet over `source` at BATCH a learner (NetSpec, xavier fillers)."""
    n = caffe.NetSpec()
    n.data, n.label = L.Data(source=source, backend=P.Data.LMDB, batch_size=BATCH,
                             transform_param=dict(scale=1. / 256), ntop=2)
    n.loss = L.SoftmaxWithLoss(lenet_layers(n), n.label)
    return write_file(os.path.join(str(folder), name + '_net.prototxt'), str(n.to_proto()))


def solver(folder, name, net):
    return write_file(os.path.join(str(folder), name + '_solver.prototxt'),
                      SOLVER.format(net=net, iterations=ITERATIONS,
                                    prefix=os.path.join(str(folder), name)))


def caffemodel_weights(path):
    model = caffe_pb2.NetParameter()
    with open(path, 'rb') as file:
        model.ParseFromString(file.read())
    return [(layer.name, np.array(blob.data)) for layer in model.layer for blob in layer.blobs]


def relative_difference(weights, expected):
    """The largest over blobs of max|a - b| / max|b| (DDL's C++ tests' measure)."""
    assert [name for name, _ in weights] == [name for name, _ in expected]
    return max(np.abs(a - b).max() / max(np.abs(b).max(), 1e-12)
               for (_, a), (_, b) in zip(weights, expected))


@pytest.fixture(scope='module')
def digits(tmp_path_factory):
    folder = tmp_path_factory.mktemp('ddl')
    return folder, write_digits_lmdb(folder, 4 * BATCH * ITERATIONS)


@needs_mpi
def test_a_python_training_loop_ends_with_the_weights_of_caffe_train_ddl(digits):
    folder, source = digits
    net = lenet(folder, 'lenet', source)
    tool_solver = solver(folder, 'tool', net)
    code, output, _ = mpirun([os.path.join(BINARY_DIR, 'bin', 'caffe'), 'train', '-solver',
                              tool_solver, '-ddl', '-mode r:2'])
    assert code == 0, output
    expected = caffemodel_weights(os.path.join(str(folder),
                                               'tool_iter_{}.caffemodel'.format(ITERATIONS)))

    ranks = learners('train', folder, solver(folder, 'loop', net), solver(folder, 'solve', net))
    for rank, result in enumerate(ranks):
        assert (result['rank'], result['size'], result['device']) == (rank, 2, -1)
        assert (result['solver_count'], result['solver_rank']) == (2, rank)
        assert result['iter'] == result['solved_iter'] == ITERATIONS
        assert result['allreduce'] == 'ring'
        assert result['gradient_count'] == sum(len(b) for _, b in expected)
    loop = caffemodel_weights(os.path.join(str(folder), 'loop.caffemodel'))
    assert relative_difference(loop, expected) <= 1e-5
    # solve(): rank 0 trains through Solver::Solve and writes the one snapshot.
    solved = caffemodel_weights(os.path.join(str(folder),
                                             'solve_iter_{}.caffemodel'.format(ITERATIONS)))
    assert relative_difference(solved, expected) <= 1e-5
    assert sorted(f for f in os.listdir(str(folder)) if f.startswith('solve_iter_')) == [
        'solve_iter_{}.caffemodel'.format(ITERATIONS),
        'solve_iter_{}.solverstate'.format(ITERATIONS)]
    # Every learner ends with the same weights, to the bit.
    for name, values in ranks[0]['arrays'].items():
        np.testing.assert_array_equal(ranks[1]['arrays'][name], values, err_msg=name)


@pytest.fixture(scope='module')
def collectives(digits):
    """ddl_learner.py's collectives: every learner's values and errors."""
    folder, source = digits
    return learners('collectives', folder, lenet(folder, 'bcast', source))


@needs_mpi
def test_collectives_give_every_learner_the_same_values(collectives):
    ranks = collectives
    for rank, result in enumerate(ranks):
        assert (result['rank'], result['size'], result['device']) == (rank, 2, -1)
        assert (result['ddl_rank'], result['ddl_size'], result['local_rank']) == (rank, 2, rank)
        assert result['initialized'] and not result['before']['initialized']
        arrays = result['arrays']
        # bcast: root's values, in the array given (and returned).
        assert result['bcast_returns_its_argument']
        for root in (0, 1):
            for dtype in ('float32', 'float64'):
                values = arrays['bcast_{}_{}'.format(root, dtype)]
                assert values.dtype == dtype
                np.testing.assert_array_equal(
                    values, np.arange(6, dtype=dtype).reshape(2, 3) + 10 * root + 0.25)
        # allreduce: (1 + 2) x and its mean, in a new array of the argument's shape and dtype.
        for dtype in ('float32', 'float64'):
            assert result['allreduce_dtype_' + dtype] == dtype
            np.testing.assert_array_equal(arrays['allreduce_sum_' + dtype],
                                          3 * np.arange(6).reshape(3, 2))
            np.testing.assert_array_equal(arrays['allreduce_avg_' + dtype],
                                          1.5 * np.arange(6).reshape(3, 2))
        assert result['allreduce_shape'] == [3, 2] and result['allreduce_input_kept']
        np.testing.assert_array_equal(arrays['allreduce_default'], np.full(4, 1.5))
        # Exact although the job was started with -compress bf16.
        np.testing.assert_array_equal(arrays['allreduce_fine'],
                                      np.full(3, 2.0 + 3 * 2.0 ** -20, np.float32))
        assert arrays['allreduce_empty'].shape == (0,)
        np.testing.assert_array_equal(arrays['after_errors'], [2, 2])
    # bcast_net: the nets differed (other seeds) and end with rank 0's weights.
    before = [ranks[r]['arrays']['before_conv1_0'] for r in (0, 1)]
    assert not np.array_equal(before[0], before[1])
    for name in (k for k in ranks[0]['arrays'] if k.startswith('after_') and k != 'after_errors'):
        for rank in (0, 1):
            np.testing.assert_array_equal(ranks[rank]['arrays'][name],
                                          ranks[0]['arrays']['before_' + name[len('after_'):]],
                                          err_msg=name)


@needs_mpi
def test_misuse_is_one_line_on_every_learner(collectives):
    expected = {
        'op': ('ValueError', "caffe.ddl.allreduce(op='max'): expected 'avg' or 'sum'"),
        'int_dtype': ('ValueError', 'caffe.ddl.allreduce: arrays of float32 or float64 only, '
                                    'not int64'),
        'float16': ('ValueError', 'arrays of float32 or float64 only, not float16'),
        'list': ('ValueError', 'expected a numpy array of float32 or float64, not list'),
        'strided': ('ValueError', 'caffe.ddl.bcast: the array is not C-contiguous'),
        'read_only': ('ValueError', 'the array is read-only'),
        'root': ('ValueError', 'caffe.ddl.bcast(root=2): the learners are 0 to 1'),
        'sizes_differ': ('ValueError', "caffe.ddl.allreduce: the learners' arrays differ "
                                       "(learner 0 has 3 float64 values, learner 1 has 4 float64 "
                                       "values)"),
        'dtypes_differ': ('ValueError', 'learner 0 has 3 float32 values, learner 1 has 3 float64'),
        'init_twice': ('Error', 'caffe.ddl.init(): DDL is initialized already'),
        'attach_not_a_solver': ('ValueError', 'caffe.ddl.attach: expected a caffe solver'),
    }
    for result in collectives:
        for case, (kind, message) in expected.items():
            error = result['errors'][case]
            assert error is not None, case
            assert error[0] == kind and message in error[1] and '\n' not in error[1], (case, error)
        for error in (result['before']['rank'], result['before']['bcast']):
            assert error[0] == 'Error' and 'call caffe.ddl.init() first' in error[1], error
        after = result['after_finalize']
        assert not after['initialized']
        for error in (after['rank'], after['init']):
            assert error[0] == 'Error' and 'DDL has ended in this process' in error[1], error


def test_misuse_before_init_and_bad_arguments_are_errors():
    """In this process, without mpirun: nothing here starts MPI."""
    assert not caffe.ddl.is_initialized()
    for call, args in ((caffe.ddl.rank, ()), (caffe.ddl.local_rank, ()),
                       (caffe.ddl.allreduce, (np.zeros(2),)), (caffe.ddl.attach, (None,))):
        with pytest.raises(caffe.Error) as error:
            call(*args)
        assert 'caffe.ddl.init() first' in str(error.value) or 'no MPI support' in str(error.value)
    with pytest.raises(caffe.Error, match="unknown algorithm 'z' in '-mode z:2'"):
        caffe.ddl.init('-mode z:2')
    with pytest.raises(caffe.Error, match="'x3' in '-dump_iter x3' is not an iteration count"):
        caffe.ddl.init('-mode r:2 -dump_iter x3')
    with pytest.raises(ValueError, match=r"caffe.ddl.init\(gpu=-1\): expected None or False"):
        caffe.ddl.init('-mode r:2', gpu=-1)
    if caffe.has_mpi() and not caffe.gpu_available():
        with pytest.raises(caffe.Error, match=r'caffe.ddl.init\(gpu=True\): (this build of Caffe '
                           'has no GPU support|no usable GPU)'):
            caffe.ddl.init('-mode r:2', gpu=True)
    assert not caffe.ddl.is_initialized()


@pytest.mark.skipif(caffe.has_mpi(), reason='this build has MPI (the other tests run)')
def test_a_build_without_mpi_says_so():
    with pytest.raises(caffe.Error, match='this build of Caffe has no MPI support'):
        caffe.ddl.init('-mode r:2')
    with pytest.raises(caffe.Error, match='no MPI support'):
        caffe.ddl.bcast(np.zeros(2))


@needs_mpi
def test_a_mode_that_does_not_fit_the_job_is_invalid_dim_on_every_learner(tmp_path):
    for result in learners('invalid_dim', tmp_path):
        kind, message = result['first']
        assert kind == 'Error' and message.startswith(
            'invalid dim size=2 usr_size=3 dim[0]=3 dim[1]=1 dim[2]=1'), message
        kind, message = result['again']
        assert kind == 'Error' and 'DDL has ended in this process' in message, message


@needs_mpi
def test_an_uncaught_exception_on_one_learner_ends_the_job(tmp_path):
    code, output, seconds = mpirun([sys.executable, os.path.join(TEST_DIR, 'ddl_learner.py'),
                                    'uncaught', str(tmp_path)], timeout=60)
    assert code != 0, output
    assert 'ZeroDivisionError: learner 1 fails on purpose' in output, output
    assert 'caffe.ddl: learner 1: uncaught ZeroDivisionError; ending the job (MPI_Abort)' in output
    assert seconds < 30, output


def example_root(folder):
    """A scratch root for examples/pycaffe/ddl_train.py: its solver and net, and LMDBs of
    generated digits (a bar whose row is the digit)."""
    for path in ('examples/ddl/lenet_digits_ddl_solver.prototxt',
                 'examples/mnist/lenet_digits_train_test.prototxt'):
        os.makedirs(str(folder / os.path.dirname(path)), exist_ok=True)
        shutil.copy(os.path.join(SOURCE_DIR, path), str(folder / path))
    images = np.zeros((120, 28, 28), np.uint8)
    for k in range(120):
        images[k, 2 + 2 * (k % 10), 4:24] = 200
    for split in ('train', 'test'):
        mnist_lmdb(folder / 'examples' / 'mnist' / 'digits_{}_lmdb'.format(split), images,
                   np.arange(120) % 10)
    return dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1',
                OMP_NUM_THREADS='1')


@needs_mpi
def test_the_example_trains_lenet_on_digits(tmp_path):
    """examples/pycaffe/ddl_train.py as 2 learners, a few steps."""
    env = example_root(tmp_path)
    result = subprocess.run(
        [MPIRUN, '--oversubscribe', '-n', '2', sys.executable,
         os.path.join(SOURCE_DIR, 'examples', 'pycaffe', 'ddl_train.py'), '--iters', '4',
         '--test_iter', '1'], cwd=str(tmp_path), env=env, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, timeout=120, check=False)
    output = result.stdout.decode(errors='replace')
    assert result.returncode == 0, output
    assert '2 learners' in output and 'accuracy' in output, output
    assert os.path.exists(str(tmp_path / 'examples' / 'ddl' / 'lenet_digits_ddl_py.caffemodel'))


@needs_mpi
def test_ctrl_c_on_mpirun_stops_the_example_with_its_weights_and_a_snapshot(tmp_path):
    """Ctrl-C (SIGINT to mpirun's process group; mpirun then sends the learners SIGTERM): the
    learners vote, stop after the same step, and rank 0 leaves the weights and a snapshot."""
    env = example_root(tmp_path)
    job = subprocess.Popen(
        [MPIRUN, '--oversubscribe', '-n', '2', '--mca', 'odls_base_sigkill_timeout', '5',
         sys.executable, os.path.join(SOURCE_DIR, 'examples', 'pycaffe', 'ddl_train.py'),
         '--iters', '100000', '--test_iter', '1', '--display', '2'],
        cwd=str(tmp_path), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        start_new_session=True)
    seen = b''
    try:
        while b'step ' not in seen:  # training has begun
            line = job.stdout.readline()
            assert line, seen.decode(errors='replace')
            seen += line
        os.killpg(job.pid, signal.SIGINT)
        job.communicate(timeout=60)
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
            job.wait()
    ddl = tmp_path / 'examples' / 'ddl'
    assert (ddl / 'lenet_digits_ddl_py.caffemodel').exists(), seen.decode(errors='replace')
    states = list(ddl.glob('lenet_digits_ddl_iter_*.solverstate'))
    assert len(states) == 1, seen.decode(errors='replace')
    assert int(states[0].name.split('_iter_')[1].split('.')[0]) >= 1
