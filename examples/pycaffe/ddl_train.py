#!/usr/bin/env python3
"""Trains LeNet on the bundled digits as N learners of one DDL job, from Python (caffe.ddl):
the pycaffe twin of examples/ddl/train_lenet_ddl.sh. From the repository root, after
data/digits/get_digits.sh and examples/mnist/create_digits.sh:

    mpirun -n 2 --oversubscribe -x OMP_NUM_THREADS=1 \\
        env PYTHONPATH=build/python python3 examples/pycaffe/ddl_train.py [--mode r:2] [--gpu]

Every learner runs this script: caffe.ddl.init joins the job, the solver is made after it (its
data layer then reads this learner's share of the LMDB), caffe.ddl.attach averages the
gradients over the learners before each update, and a plain solver.step(1) loop trains. As with
`caffe train -ddl`, N learners at batch 64 take the steps of one process at batch N x 64, so the
solver's schedule (examples/ddl/lenet_digits_ddl_solver.prototxt, that of one process) is
divided by N. Rank 0 logs (as `caffe train` does; the others warn only), reports the loss, tests
and saves examples/ddl/lenet_digits_ddl_py.caffemodel; caffe.ddl.allreduce gives the mean step
time over the learners.
"""
import argparse
import math
import os
import tempfile
import time

import numpy as np
from google.protobuf import text_format

import caffe
from caffe.proto import caffe_pb2


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--solver', default='examples/ddl/lenet_digits_ddl_solver.prototxt',
                        help="one process's solver: its iteration counts are divided by N")
    parser.add_argument('--mode', default='',
                        help='the -ddl options, e.g. "-mode r:2 -dump_iter 100" (default: one '
                        'ring over all learners)')
    parser.add_argument('--gpu', action='store_true',
                        help="each learner on its own GPU (its node-local rank's)")
    parser.add_argument('--iters', type=int, default=None, help='steps (default: max_iter / N)')
    parser.add_argument('--test_iter', type=int, default=None, help='test batches per test')
    parser.add_argument('--display', type=int, default=100,
                        help="report the loss every DISPLAY / N steps (one process's count)")
    return parser.parse_args()


def learner_solver(path, learners, iters, test_iter):
    """The solver of `path` with its schedule divided by `learners`, in a file of its own."""
    param = caffe_pb2.SolverParameter()
    with open(path) as file:
        text_format.Merge(file.read(), param)
    param.max_iter = iters or int(math.ceil(param.max_iter / learners))
    param.test_interval = max(1, min(param.max_iter, param.test_interval // learners))
    if test_iter:
        del param.test_iter[:]
        param.test_iter.append(test_iter)
    param.display = 0  # the loop below reports the loss
    param.snapshot = 0  # rank 0 saves the weights at the end
    param.snapshot_after_train = False
    with tempfile.NamedTemporaryFile('w', suffix='_solver.prototxt', delete=False) as file:
        file.write(text_format.MessageToString(param))
    return file.name, param


def test_accuracy(solver, batches):
    net = solver.test_nets[0]
    return sum(float(net.forward()['accuracy']) for _ in range(batches)) / batches


def main():
    args = parse_args()
    rank, size, device = caffe.ddl.init(args.mode, gpu=args.gpu or None)
    mode = args.mode or '-mode r:{}'.format(size)
    solver_path, param = learner_solver(args.solver, size, args.iters, args.test_iter)
    try:
        solver = caffe.get_solver(solver_path)
    finally:
        os.remove(solver_path)
    sync = caffe.ddl.attach(solver)
    batch = solver.net.blobs['data'].num
    if rank == 0:
        print('{} learners ({}), {}: LeNet at batch {} each = {} a step, {} steps; gradients '
              '({} values) averaged by {} allreduce'.format(
                  size, mode, 'GPU {}'.format(device) if device >= 0 else 'CPU', batch,
                  size * batch, param.max_iter, sync.gradient_count, sync.allreduce), flush=True)
    display = max(1, args.display // size)
    start = time.time()
    for step in range(param.max_iter):
        solver.step(1)  # rank 0 also tests every test_interval steps
        if rank == 0 and (step + 1) % display == 0:
            print('step {}: loss {:.4f} (mean over learners)'.format(solver.iter,
                                                                     solver.smoothed_loss),
                  flush=True)
    seconds = caffe.ddl.allreduce(np.array([(time.time() - start) / param.max_iter]))
    if rank == 0:
        accuracy = test_accuracy(solver, param.test_iter[0])
        weights = param.snapshot_prefix + '_py.caffemodel'
        solver.net.save(weights)
        print('test accuracy {:.4f} after {} steps; {:.1f} ms a step (mean over learners); '
              'weights in {}'.format(accuracy, solver.iter, seconds[0] * 1e3, weights),
              flush=True)
    caffe.ddl.finalize()


if __name__ == '__main__':
    main()
