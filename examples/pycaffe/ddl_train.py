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

Stopping as `caffe train -ddl` does (its -sigterm_effect stop): SIGTERM (a scheduler's stop or
preemption, and what mpirun sends the learners on Ctrl-C), SIGINT and SIGHUP only raise a flag;
after each step the learners vote (one allreduce of their flags), so all stop after the same step,
and rank 0 saves the weights and a snapshot to resume from (`solver.restore`, or `caffe train
-snapshot latest`) before every learner exits. Give mpirun `--mca odls_base_sigkill_timeout 30`
so that its SIGKILL, after 1 s by default, does not come first.
"""
import argparse
import math
import os
import signal
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


class StopRequest:
    """SIGTERM, SIGINT and SIGHUP raise a flag instead of ending the process; agreed() tells the
    learners, all at once, whether any of them has seen one."""

    def __init__(self):
        self.signal = 0
        for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(number, self._raise)

    def _raise(self, number, frame):
        self.signal = number
        # mpirun stops reading the learners' output when it ends a job (Ctrl-C): a full pipe
        # would block the next line, and the stop with it. Lines that cannot go are dropped.
        for fd in (1, 2):
            os.set_blocking(fd, False)

    def agreed(self):
        """Collective: whether any learner was asked to stop (their flags summed)."""
        return caffe.ddl.allreduce(np.array([float(self.signal != 0)]), op='sum')[0] > 0


def say(text):
    """Prints a line of rank 0's report; once output cannot be written (StopRequest), drops it."""
    try:
        print(text, flush=True)
    except (BlockingIOError, BrokenPipeError):
        pass


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
    stop = StopRequest()
    start = time.time()
    for step in range(param.max_iter):
        solver.step(1)  # rank 0 also tests every test_interval steps
        if rank == 0 and (step + 1) % display == 0:
            say('step {}: loss {:.4f} (mean over learners)'.format(solver.iter,
                                                                   solver.smoothed_loss))
        if stop.agreed():
            if rank == 0:
                weights = param.snapshot_prefix + '_py.caffemodel'
                solver.net.save(weights)
                solver.snapshot()
                say('stopped by a signal after step {}: weights in {}, snapshot {}_iter_{}'
                    '.solverstate'.format(solver.iter, weights, param.snapshot_prefix,
                                          solver.iter))
            # Every learner waits here until rank 0's files are complete.
            caffe.ddl.allreduce(np.zeros(1))
            if stop.signal == signal.SIGTERM:
                os._exit(0)  # mpirun, itself ending the job, would not answer MPI_Finalize
            caffe.ddl.finalize()
            return
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
