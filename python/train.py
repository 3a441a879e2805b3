#!/usr/bin/env python3
"""Trains a solver on one or several GPUs from Python, as BVLC's python/train.py does: one
process per GPU, kept in step by caffe.NCCL (the gradients averaged over the GPUs after each
backward, so N GPUs at batch B take the steps of one at batch N x B).

    train.py --solver solver.prototxt [--gpus 0 1 ...] [--snapshot x.solverstate] [--timing]

Each process's TRAIN data layers read their share of the records; rank 0 (the first GPU listed)
logs, tests and snapshots. The solver runs to its max_iter. --timing prints rank 0's mean time
per iteration at the end. One GPU trains without NCCL; several need a GPU build with NCCL
(caffe.has_nccl()). For multi-node training use `caffe train -ddl` (docs/DDL.md).
"""
import argparse
import multiprocessing
import sys
import time

import _build_tree  # this folder: the scripts' helper

_build_tree.prefer_built_caffe()
import caffe  # noqa: E402


def solve(solver_path, snapshot, gpus, timing, uid, rank):
    """One process: the solver on gpus[rank]; a failure is one line and exit code 1."""
    try:
        train(solver_path, snapshot, gpus, timing, uid, rank)
    except caffe.Error as error:
        print('train.py: rank {} (GPU {}): error: {}'.format(rank, gpus[rank], error),
              file=sys.stderr)
        sys.exit(1)


def train(solver_path, snapshot, gpus, timing, uid, rank):
    caffe.set_mode_gpu()
    caffe.set_device(gpus[rank])
    caffe.set_solver_count(len(gpus))
    caffe.set_solver_rank(rank)
    caffe.set_multiprocess(True)
    if rank != 0:
        caffe.init_log(1)  # rank 0 logs; the others warn
    solver = caffe.get_solver(solver_path)
    if snapshot:
        solver.restore(snapshot)
    if len(gpus) > 1:
        nccl = caffe.NCCL(solver, uid)
        nccl.bcast()  # every solver starts from rank 0's weights
        solver.add_callback(nccl)
        if solver.param.layer_wise_reduce:  # reduce while backward goes on (the default)
            solver.net.after_backward(nccl)
    start = time.time()
    iterations = solver.param.max_iter - solver.iter
    solver.step(iterations)
    if timing and rank == 0 and iterations > 0:
        print('train.py: {:.3f} ms per iteration over {} iterations on GPUs {}'.format(
            (time.time() - start) * 1e3 / iterations, iterations,
            ' '.join(str(gpu) for gpu in gpus)))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--solver', required=True, help='the solver .prototxt')
    parser.add_argument('--snapshot', help='a .solverstate to resume from')
    parser.add_argument('--gpus', type=int, nargs='+', default=[0], help='GPU ids (default: 0)')
    parser.add_argument('--timing', action='store_true', help='print the time per iteration')
    args = parser.parse_args(argv)
    if len(set(args.gpus)) != len(args.gpus):
        parser.error('--gpus {}: each GPU once (NCCL puts one process on each)'.format(
            ' '.join(str(gpu) for gpu in args.gpus)))
    if not caffe.gpu_available():
        parser.error('no GPU is available (a CPU-only build, or no device visible); '
                     'train on the CPU with `caffe train -solver ...`')
    if len(args.gpus) > 1 and not caffe.has_nccl():
        parser.error('--gpus {}: several GPUs need a GPU build of Caffe with NCCL; use '
                     '`caffe train -gpu {}` instead'.format(
                         ' '.join(str(gpu) for gpu in args.gpus),
                         ','.join(str(gpu) for gpu in args.gpus)))
    uid = caffe.NCCL.new_uid() if len(args.gpus) > 1 else b''
    # Fresh processes (not forks of this one), each with its own CUDA context.
    context = multiprocessing.get_context('spawn')
    processes = [context.Process(target=solve, args=(args.solver, args.snapshot, args.gpus,
                                                     args.timing, uid, rank))
                 for rank in range(len(args.gpus))]
    for process in processes:
        process.start()
    # A process that fails leaves the others waiting in NCCL for it: end them, never hang.
    while any(process.is_alive() for process in processes):
        if any(process.exitcode not in (None, 0) for process in processes):
            for process in processes:
                if process.is_alive():
                    process.terminate()
        time.sleep(0.1)
    failed = ['rank {} (GPU {}) exited with {}'.format(rank, args.gpus[rank], process.exitcode)
              for rank, process in enumerate(processes) if process.exitcode != 0]
    if failed:
        print('train.py: error: ' + '; '.join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
