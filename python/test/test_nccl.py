"""caffe.NCCL: BVLC's multi-GPU training from Python (python/train.py), one solver per process
and GPU. Two processes at batch B end with the weights of one process at batch 2 x B."""
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

import caffe
from conftest import BINARY_DIR, write_file

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
"""

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


def write_digits_lmdb(folder, count):
    """count 28x28 images (MNIST's idx files) turned into an LMDB by convert_mnist_data."""
    images = os.path.join(folder, 'images.idx')
    labels = os.path.join(folder, 'labels.idx')
    pixels = bytes((k * 37 + p * 11 + (k % 10) * p) % 256 for k in range(count)
                   for p in range(28 * 28))
    with open(images, 'wb') as out:
        out.write(struct.pack('>iiii', 2051, count, 28, 28) + pixels)
    with open(labels, 'wb') as out:
        out.write(struct.pack('>ii', 2049, count) + bytes(k % 10 for k in range(count)))
    source = os.path.join(folder, 'digits_lmdb')
    subprocess.run([os.path.join(BINARY_DIR, 'bin', 'convert_mnist_data'), images, labels, source,
                    '--backend=lmdb'], check=True, capture_output=True)
    return source


def write_solver(folder, name, source, batch):
    net = write_file(os.path.join(folder, name + '_net.prototxt'),
                     NET.format(source=source, batch=batch))
    return write_file(os.path.join(folder, name + '_solver.prototxt'),
                      SOLVER.format(net=net, iterations=ITERATIONS))


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


@pytest.mark.skipif(not caffe.has_nccl() or not caffe.gpu_available(),
                    reason='needs a GPU build with NCCL and a GPU')
def test_two_gpu_processes_train_like_one_at_twice_the_batch(tmp_path):
    if gpu_count() < 2:
        pytest.skip('needs two GPUs (NCCL does not put two ranks on one GPU)')
    folder = str(tmp_path)
    source = write_digits_lmdb(folder, 4 * BATCH * ITERATIONS)
    # One process at batch 2B, here.
    caffe.set_mode_gpu()
    caffe.set_device(0)
    single = caffe.SGDSolver(write_solver(folder, 'single', source, 2 * BATCH))
    single.step(ITERATIONS)
    expected = {name: [blob.data.copy() for blob in blobs]
                for name, blobs in single.net.params.items()}
    caffe.set_mode_cpu()
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
    net = caffe.Net(write_solver(folder, 'check', source, BATCH).replace(
        '_solver.prototxt', '_net.prototxt'), caffe.TRAIN, weights=out)
    for name, blobs in expected.items():
        for index, want in enumerate(blobs):
            np.testing.assert_allclose(net.params[name][index].data, want, rtol=1e-5,
                                       atol=1e-6, err_msg='{} blob {}'.format(name, index))
    # Training moved the weights from where the seed put them: the comparison means something.
    caffe.set_random_seed(1701)
    fresh = caffe.Net(os.path.join(folder, 'check_net.prototxt'), caffe.TRAIN)
    assert not np.allclose(fresh.params['ip'][0].data, expected['ip'][0])
