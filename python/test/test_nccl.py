"""caffe.NCCL: BVLC's multi-GPU training from Python, one solver per process and GPU, by hand
and through python/train.py. Two processes at batch B end with the weights of one process at
batch 2 x B; a process that fails ends the others."""
import os
import subprocess
import sys

import numpy as np
import pytest

import caffe
from conftest import SOURCE_DIR, write_digits_lmdb, write_file

BATCH = 4
ITERATIONS = 5

NET = """
name: "nccl_py"
layer {{ name: "data" type: "Data" top: "data" top: "label" include {{ phase: TRAIN }}
        transform_param {{ scale: 0.00390625 }}
        data_param {{ source: "{source}" backend: LMDB batch_size: {batch} }} }}
layer {{ name: "conv" type: "Convolution" bottom: "data" top: "conv"
        convolution_param {{ num_output: 6 kernel_size: 5 stride: 2
                             weight_filler {{ type: "xavier" }} }} }}
layer {{ name: "relu" type: "ReLU" bottom: "conv" top: "conv" }}
layer {{ name: "ip" type: "InnerProduct" bottom: "conv" top: "ip"
        inner_product_param {{ num_output: 10 weight_filler {{ type: "xavier" }} }} }}
layer {{ name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }}
"""

SOLVER = """net: "{net}"
base_lr: 0.05 momentum: 0.9 weight_decay: 0.0005 lr_policy: "fixed"
max_iter: {iterations} random_seed: 1701 solver_mode: GPU snapshot_after_train: false
snapshot: {iterations} snapshot_prefix: "{prefix}"
"""
TRAIN_PY = os.path.join(SOURCE_DIR, 'python', 'train.py')

# One learner of BVLC's python/train.py: argv = rank, count, uid (hex), solver, weights out.
LEARNER = """
import sys
import caffe
rank, count, uid, solver_path, out = sys.argv[1:]
rank, count = int(rank), int(count)
caffe.init_log(1)
caffe.set_mode_gpu()
caffe.set_device(rank)
caffe.set_solver_count(count)
caffe.set_solver_rank(rank)
caffe.set_multiprocess(True)
solver = caffe.SGDSolver(solver_path)
nccl = caffe.NCCL(solver, bytes.fromhex(uid))
nccl.bcast()
solver.add_callback(nccl)
solver.net.after_backward(nccl)
solver.step(solver.param.max_iter)
if rank == 0:
    solver.net.save(out)
"""


def write_solver(folder, name, source, batch):
    net = write_file(os.path.join(folder, name + '_net.prototxt'),
                     NET.format(source=source, batch=batch))
    return write_file(os.path.join(folder, name + '_solver.prototxt'),
                      SOLVER.format(net=net, iterations=ITERATIONS,
                                    prefix=os.path.join(folder, name)))


def run_train_py(timeout, *args):
    """python/train.py with `args`: (exit code, stdout and stderr)."""
    result = subprocess.run([sys.executable, TRAIN_PY] + list(args), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, timeout=timeout, check=False)
    return result.returncode, result.stdout.decode(errors='replace')


def gpu_count():
    count = 0
    try:
        while count < 8:
            caffe.set_device(count)
            count += 1
    except caffe.Error:
        pass
    if count:
        caffe.set_device(0)
    return count


def test_without_nccl_it_says_what_it_needs():
    if caffe.has_nccl():
        pytest.skip('this build has NCCL')
    with pytest.raises(caffe.Error, match='caffe.NCCL needs a GPU build of Caffe with NCCL'):
        caffe.NCCL.new_uid()


def single_process_weights(folder, source):
    """The weights one GPU process ends with at batch 2B."""
    caffe.set_mode_gpu()
    caffe.set_device(0)
    single = caffe.SGDSolver(write_solver(folder, 'single', source, 2 * BATCH))
    single.step(ITERATIONS)
    expected = {name: [blob.data.copy() for blob in blobs]
                for name, blobs in single.net.params.items()}
    caffe.set_mode_cpu()
    return expected


def expect_weights(folder, source, weights, expected):
    net = caffe.Net(write_solver(folder, 'check', source, BATCH).replace(
        '_solver.prototxt', '_net.prototxt'), caffe.TRAIN, weights=weights)
    for name, blobs in expected.items():
        for index, want in enumerate(blobs):
            np.testing.assert_allclose(net.params[name][index].data, want, rtol=1e-5,
                                       atol=1e-6, err_msg='{} blob {}'.format(name, index))


needs_nccl = pytest.mark.skipif(not caffe.has_nccl() or not caffe.gpu_available(),
                                reason='needs a GPU build with NCCL and a GPU')


@pytest.fixture
def two_gpu_run(tmp_path):
    """(folder, LMDB, the weights one GPU process ends with at batch 2B), on two GPUs."""
    if gpu_count() < 2:
        pytest.skip('needs two GPUs (NCCL does not put two ranks on one GPU)')
    folder = str(tmp_path)
    source = write_digits_lmdb(folder, 4 * BATCH * ITERATIONS)
    return folder, source, single_process_weights(folder, source)


@needs_nccl
def test_two_gpu_processes_train_like_one_at_twice_the_batch(two_gpu_run):
    folder, source, expected = two_gpu_run
    # Two processes at batch B, kept in step by caffe.NCCL.
    learner = write_file(os.path.join(folder, 'learner.py'), LEARNER)
    solver = write_solver(folder, 'nccl', source, BATCH)
    out = os.path.join(folder, 'nccl.caffemodel')
    uid = caffe.NCCL.new_uid().hex()
    runs = [subprocess.Popen([sys.executable, learner, str(rank), '2', uid, solver, out],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            for rank in range(2)]
    for rank, run in enumerate(runs):
        output = run.communicate(timeout=600)[0].decode(errors='replace')
        assert run.returncode == 0, 'learner {}:\n{}'.format(rank, output)
    expect_weights(folder, source, out, expected)
    # Training moved the weights from where the seed put them: the comparison means something.
    caffe.set_random_seed(1701)
    fresh = caffe.Net(os.path.join(folder, 'check_net.prototxt'), caffe.TRAIN)
    assert not np.allclose(fresh.params['ip'][0].data, expected['ip'][0])


@needs_nccl
def test_train_py_on_two_gpus_trains_like_one_at_twice_the_batch(two_gpu_run):
    folder, source, expected = two_gpu_run
    solver = write_solver(folder, 'script', source, BATCH)
    code, output = run_train_py(600, '--solver', solver, '--gpus', '0', '1', '--timing')
    assert code == 0, output
    assert 'ms per iteration over {} iterations on GPUs 0 1'.format(ITERATIONS) in output, output
    # Rank 0 alone snapshots.
    snapshots = sorted(name for name in os.listdir(folder) if name.startswith('script_iter_'))
    assert snapshots == ['script_iter_{}.caffemodel'.format(ITERATIONS),
                         'script_iter_{}.solverstate'.format(ITERATIONS)], snapshots
    expect_weights(folder, source, os.path.join(folder, snapshots[0]), expected)


@needs_nccl
def test_train_py_ends_every_process_when_one_fails(tmp_path):
    folder = str(tmp_path)
    source = write_digits_lmdb(folder, 4 * BATCH)
    solver = write_solver(folder, 'failing', source, BATCH)
    # GPU 63 does not exist: rank 1 fails at once, and rank 0, waiting for it in NCCL, is ended.
    code, output = run_train_py(300, '--solver', solver, '--gpus', '0', '63')
    assert code == 1, output
    assert 'train.py: rank 1 (GPU 63): error: cannot use GPU 63' in output, output
    assert 'train.py: error: rank 0 (GPU 0) exited with' in output, output


def test_train_py_names_what_it_cannot_do(tmp_path):
    solver = write_file(tmp_path / 'solver.prototxt', 'net: "none.prototxt"\n')
    code, output = run_train_py(120, '--solver', solver, '--gpus', '0', '0')
    assert code == 2, output
    assert '--gpus 0 0: each GPU once' in output, output
    if not caffe.gpu_available():
        code, output = run_train_py(120, '--solver', solver)
        assert code == 2, output
        assert 'no GPU is available' in output, output


@needs_nccl
def test_after_backward_takes_the_nccl_of_its_own_solver_once_added(tmp_path):
    folder = str(tmp_path)
    source = write_digits_lmdb(folder, 4 * BATCH)
    caffe.set_mode_gpu()
    caffe.set_device(0)
    solver = caffe.SGDSolver(write_solver(folder, 'one', source, BATCH))
    other = caffe.SGDSolver(write_solver(folder, 'other', source, BATCH))
    nccl = caffe.NCCL(solver, caffe.NCCL.new_uid())  # a group of one
    assert (nccl.rank, nccl.size) == (0, 1)
    with pytest.raises(ValueError, match=r'call solver.add_callback\(nccl\) first'):
        solver.net.after_backward(nccl)
    with pytest.raises(ValueError, match='made for another solver'):
        other.add_callback(nccl)
    solver.add_callback(nccl)
    with pytest.raises(ValueError, match="made for another solver's net"):
        other.net.after_backward(nccl)
    solver.net.after_backward(nccl)
    solver.step(2)  # alone, the mean is its own gradient
    assert solver.iter == 2
    caffe.set_mode_cpu()
