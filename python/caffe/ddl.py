"""caffe.ddl: DDL from Python. Every process mpirun starts is one learner of the job, as with
`caffe train -ddl` (docs/DDL.md), in the manner of IBM PowerAI DDL's Python interface:

    import caffe
    rank, size, device = caffe.ddl.init('-mode r:2 -dump_iter 100')   # gpu=True: a GPU learner
    solver = caffe.get_solver('solver.prototxt')   # after init: its data layers read a share
    caffe.ddl.attach(solver)         # gradients averaged over the learners before each update
    for _ in range(solver.max_iter):
        solver.step(1)               # or solver.solve(): rank 0 tests and snapshots
    caffe.ddl.finalize()             # also done at exit

    mpirun -n 2 python3 train.py

init(mode='', gpu=None, bvlc=False): the -ddl option string, this learner's GPU (None: the CPU;
True or N: its N-th granted GPU, as `-gpu N -ddl`) and `-bvlc`; returns (rank, size, device),
device -1 on the CPU. It sets this thread's solver count and rank, so make solvers after it.
rank(), size(), local_rank() (among the learners on this host), is_initialized().
bcast(array, root=0): in place, every learner's array becomes root's; returns it.
bcast_net(net, root=0): every learner's net gets root's parameters.
allreduce(array, op='avg'): a new array, the element-wise sum ('sum') or mean ('avg') over the
learners, by the allreduce -mode asks for (bitwise the same on every learner), in full
precision (-compress applies to the gradients only).
attach(solver): the solver's gradients are averaged as `caffe train -ddl` does (its DdlSync);
returns a Sync (sync.solve(), sync.allreduce, sync.buckets, sync.gradient_count).
finalize(): ends this learner's part; every learner calls it (at exit if not before).

Arrays are numpy float32 or float64, C-contiguous, of the same size and dtype on every learner;
anything else is a ValueError (on every learner, where they differ). Calls before init, a bad
-mode string and a build without MPI raise caffe.Error. An exception that no learner catches
ends the whole job (MPI_Abort), as a failing `caffe train -ddl` learner does: the others may be
waiting for it.
"""
import atexit
import sys

from ._caffe import _ddl

__all__ = ['init', 'finalize', 'is_initialized', 'rank', 'size', 'local_rank', 'bcast',
           'bcast_net', 'allreduce', 'attach', 'Sync']

Sync = getattr(_ddl, 'Sync', None)
finalize = _ddl.finalize
is_initialized = _ddl.is_initialized
rank = _ddl.rank
size = _ddl.size
local_rank = _ddl.local_rank
bcast = _ddl.bcast
bcast_net = _ddl.bcast_net
allreduce = _ddl.allreduce
attach = _ddl.attach

_hooks_installed = False


def init(mode='', gpu=None, bvlc=False):
    """Joins the DDL job mpirun started; returns (rank, size, device). See the module's doc."""
    _install_hooks()
    return _ddl.init(mode, gpu, bvlc)


def _install_hooks():
    global _hooks_installed
    if _hooks_installed:
        return
    _hooks_installed = True
    previous = sys.excepthook

    def end_job_on_uncaught_exception(kind, value, traceback):
        previous(kind, value, traceback)
        if _ddl.is_initialized():
            sys.stderr.write('caffe.ddl: learner {}: uncaught {}; ending the job (MPI_Abort)\n'
                             .format(_ddl.rank(), kind.__name__))
            sys.stdout.flush()
            sys.stderr.flush()
            _ddl._abort_job(1)

    sys.excepthook = end_job_on_uncaught_exception
    atexit.register(_ddl.finalize)
