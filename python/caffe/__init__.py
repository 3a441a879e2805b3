"""pycaffe: Caffe from Python, as BVLC's pycaffe offers it.

    import caffe
    caffe.set_mode_cpu()
    net = caffe.Net('deploy.prototxt', caffe.TEST, weights='model.caffemodel')
    net.blobs['data'].data[...] = image_batch          # numpy views onto the net's blobs
    probabilities = net.forward()['prob']

Nets: caffe.Net(prototxt, phase[, weights=, level=, stages=]) or Net(prototxt, weights, phase);
net.blobs / params / layers / inputs / outputs / blob_loss_weights, forward(**inputs, start=,
end=, blobs=), backward(**diffs, ...), forward_all, forward_backward_all, reshape,
clear_param_diffs, copy_from, share_with, save (binary .caffemodel), save_hdf5 / load_hdf5,
before_forward / after_forward / before_backward / after_backward (fn(layer_index) around each
layer's pass).
Training: caffe.get_solver(solver.prototxt) or SGDSolver, NesterovSolver, AdaGradSolver,
RMSPropSolver, AdaDeltaSolver, AdamSolver: step(n), solve(resume_file=None), restore, snapshot,
apply_update, share_weights(net), net, test_nets, iter, max_iter, param, add_callback.
Context (per thread): set_mode_cpu, set_mode_gpu, set_device, set_random_seed, init_log, log.
Precision (the process): set_precision('bf16' | 'fp16' | 'fp32' | '') as `caffe -precision`, for
the nets made afterwards; cpu_has_bf16() says whether this CPU computes in bf16 (docs/PRECISION.md).
Also caffe.io (Transformer, load_image, resize_image, oversample, proto <-> array), caffe.draw,
caffe.Classifier, caffe.Detector, caffe.NetSpec with caffe.layers / caffe.params (and
caffe.coord_map's crop, which aligns a fully convolutional net's tops), and
caffe.Layer, the base class of layers written in Python (type: "Python" in a prototxt).
Errors from the library are raised as caffe.Error (a RuntimeError) carrying its message.

Distributed training and memory settings:
  - set_solver_count / solver_count, set_solver_rank / solver_rank, set_multiprocess: this
    thread's place among parallel solvers (only the root solver, rank 0, logs, tests and
    snapshots). has_mpi() says whether this build has DDL's MPI transport, and
    parse_ddl_options("-mode r:4x2 ...") checks a `caffe train -ddl` option string and returns
    its settings. DDL training itself runs through `mpirun ... caffe train -ddl "<options>"`
    (docs/DDL.md), or from Python with caffe.ddl under mpirun (init, bcast, bcast_net,
    allreduce, attach(solver), finalize; see its doc). NCCL(solver, uid) keeps one GPU solver per process in step, as BVLC's
    python/train.py uses it (uid = NCCL.new_uid(), then per process set_device, the solver
    count and rank, set_multiprocess(True), a solver, NCCL(solver, uid), bcast() and
    solver.add_callback(nccl)); has_nccl() says whether this build has it (GPU builds with
    NCCL).
  - set_lms(lms=-1, lms_frac=0.0, lms_prefetch=1, gpu_mem_limit=None): Large Model Support
    as `caffe train -lms ... -lms_frac ... -lms_prefetch ... -gpu_mem_limit ...` (docs/LMS.md)
    for the nets and solvers this thread makes afterwards, in GPU mode on set_device's GPU;
    lms_stats() gives its counters line. In CPU mode it has no effect (a warning says so).
"""
from ._caffe import (NCCL, Blob, BlobVec, Error, Layer, Timer, __version__, cpu_has_bf16,
                     get_solver, gpu_available, has_mpi, has_nccl, image_support, init_log,
                     layer_type_list, lms_stats, log, parse_ddl_options, set_device,
                     set_lms, set_mode_cpu, set_mode_gpu, set_multiprocess, set_precision,
                     set_random_seed, set_solver_count, set_solver_rank, solver_count,
                     solver_rank)
from .pycaffe import (AdaDeltaSolver, AdaGradSolver, AdamSolver, Net, NesterovSolver,
                      RMSPropSolver, SGDSolver, Solver)
from .proto.caffe_pb2 import TEST, TRAIN
from .classifier import Classifier
from .detector import Detector
from . import ddl, io
from .net_spec import NetSpec, layers, params, to_proto
