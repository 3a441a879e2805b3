"""One learner of test_ddl.py's jobs: `mpirun -n 2 python3 ddl_learner.py SCENARIO FOLDER [...]`.
Each scenario writes what the test checks to FOLDER/SCENARIO.rank<R>.json (and .npz), so the
checks run in the test, once, over every learner's results.

- train SOLVER SOLVE_SOLVER: caffe.ddl.attach and a solver.step(1) loop to max_iter (rank 0
  saves loop.caffemodel), then solver.solve() with a second solver (rank 0 snapshots);
- collectives: bcast, bcast_net, allreduce, and each misuse after init with its error;
- invalid_dim: init with a -mode for 3 learners, then init again;
- uncaught: rank 1 raises, rank 0 waits in an allreduce that never completes.
"""
import json
import os
import sys

import numpy as np

import caffe


def save(folder, scenario, results, arrays=None):
    name = os.path.join(folder, '{}.rank{}'.format(scenario, results['rank']))
    with open(name + '.json', 'w') as out:
        json.dump(results, out)
    if arrays:
        np.savez(name + '.npz', **arrays)


def params(net):
    return {'{}_{}'.format(name, i): blob.data.copy()
            for name, blobs in net.params.items() for i, blob in enumerate(blobs)}


def error_of(call, *args, **kwargs):
    """(exception class name, message) of what call(*args, **kwargs) raised, or None."""
    try:
        call(*args, **kwargs)
    except Exception as error:  # noqa: BLE001: the test checks which
        return [type(error).__name__, str(error)]
    return None


def train(folder, solver_path, solve_path):
    rank, size, device = caffe.ddl.init('-mode r:2')
    solver = caffe.get_solver(solver_path)
    sync = caffe.ddl.attach(solver)
    for _ in range(solver.max_iter):
        solver.step(1)
    if rank == 0:
        solver.net.save(os.path.join(folder, 'loop.caffemodel'))
    solved = caffe.get_solver(solve_path)
    caffe.ddl.attach(solved)
    solved.solve()
    save(folder, 'train', dict(rank=rank, size=size, device=device, iter=solver.iter,
                               solved_iter=solved.iter, allreduce=sync.allreduce,
                               buckets=sync.buckets, gradient_count=sync.gradient_count,
                               solver_count=caffe.solver_count(),
                               solver_rank=caffe.solver_rank()),
         dict(params(solver.net), **{'solved_' + k: v for k, v in params(solved.net).items()}))
    caffe.ddl.finalize()


def collectives(folder, prototxt):
    results = {'before': {
        'rank': error_of(caffe.ddl.rank),
        'bcast': error_of(caffe.ddl.bcast, np.zeros(2, np.float32)),
        'initialized': caffe.ddl.is_initialized(),
    }}
    # -compress is for gradients: the collectives below still sum exactly.
    rank, size, device = caffe.ddl.init('-mode c:2 -compress bf16')
    results.update(rank=rank, size=size, device=device, local_rank=caffe.ddl.local_rank(),
                   ddl_rank=caffe.ddl.rank(), ddl_size=caffe.ddl.size(),
                   initialized=caffe.ddl.is_initialized())
    arrays = {}
    # bcast: in place, returned, from either root.
    for root in (0, 1):
        for dtype in (np.float32, np.float64):
            values = np.arange(6, dtype=dtype).reshape(2, 3) + 10 * rank + 0.25
            returned = caffe.ddl.bcast(values, root=root)
            results['bcast_returns_its_argument'] = returned is values
            arrays['bcast_{}_{}'.format(root, np.dtype(dtype).name)] = values
    # allreduce: a new array; the argument is left as it was.
    for op in ('sum', 'avg'):
        for dtype in (np.float32, np.float64):
            values = (np.arange(6, dtype=dtype) * (rank + 1)).reshape(3, 2)
            result = caffe.ddl.allreduce(values, op=op)
            results['allreduce_dtype_' + np.dtype(dtype).name] = result.dtype.name
            results['allreduce_shape'] = list(result.shape)
            results['allreduce_input_kept'] = bool((values == np.arange(6).reshape(3, 2) *
                                                    (rank + 1)).all())
            arrays['allreduce_{}_{}'.format(op, np.dtype(dtype).name)] = result
    arrays['allreduce_default'] = caffe.ddl.allreduce(np.full(4, rank + 1.0))
    # 1 + 2^-20 (rank + 1): 21 significant bits, which bf16 (8) would round away.
    arrays['allreduce_fine'] = caffe.ddl.allreduce(
        np.full(3, 1.0 + 2.0 ** -20 * (rank + 1), np.float32), op='sum')
    arrays['allreduce_empty'] = caffe.ddl.allreduce(np.zeros(0, np.float32), op='sum')
    # bcast_net: nets made with different seeds end with root's weights.
    caffe.set_random_seed(100 + rank)
    net = caffe.Net(prototxt, caffe.TRAIN)
    arrays.update({'before_' + k: v for k, v in params(net).items()})
    caffe.ddl.bcast_net(net)
    arrays.update({'after_' + k: v for k, v in params(net).items()})
    # Misuse, after init: every learner makes the same mistake, or the mistake is that they
    # differ.
    read_only = np.zeros(3)
    read_only.setflags(write=False)
    results['errors'] = {
        'op': error_of(caffe.ddl.allreduce, np.zeros(3), op='max'),
        'int_dtype': error_of(caffe.ddl.allreduce, np.zeros(3, np.int64)),
        'float16': error_of(caffe.ddl.bcast, np.zeros(3, np.float16)),
        'list': error_of(caffe.ddl.allreduce, [1.0, 2.0]),
        'strided': error_of(caffe.ddl.bcast, np.zeros(6)[::2]),
        'read_only': error_of(caffe.ddl.bcast, read_only),
        'root': error_of(caffe.ddl.bcast, np.zeros(3), root=2),
        'sizes_differ': error_of(caffe.ddl.allreduce, np.zeros(3 + rank)),
        'dtypes_differ': error_of(caffe.ddl.bcast, np.zeros(3, (np.float32, np.float64)[rank])),
        'init_twice': error_of(caffe.ddl.init, '-mode r:2'),
        'attach_not_a_solver': error_of(caffe.ddl.attach, net),
    }
    # Still in step after the mistakes.
    arrays['after_errors'] = caffe.ddl.allreduce(np.ones(2), op='sum')
    caffe.ddl.finalize()
    results['after_finalize'] = {
        'rank': error_of(caffe.ddl.rank),
        'init': error_of(caffe.ddl.init, '-mode r:2'),
        'initialized': caffe.ddl.is_initialized(),
    }
    save(folder, 'collectives', results, arrays)


def invalid_dim(folder):
    rank = int(os.environ.get('OMPI_COMM_WORLD_RANK', '-1'))
    save(folder, 'invalid_dim', dict(rank=rank, first=error_of(caffe.ddl.init, '-mode r:3'),
                                     again=error_of(caffe.ddl.init, '-mode r:2')))


def uncaught(folder):
    rank, _, _ = caffe.ddl.init('-mode r:2 -timeout 60')
    if rank == 1:
        raise ZeroDivisionError('learner 1 fails on purpose')
    caffe.ddl.allreduce(np.ones(3))  # never completes: learner 1 is gone


if __name__ == '__main__':
    caffe.init_log(1)
    scenario, folder = sys.argv[1], sys.argv[2]
    {'train': train, 'collectives': collectives, 'invalid_dim': invalid_dim,
     'uncaught': uncaught}[scenario](folder, *sys.argv[3:])
