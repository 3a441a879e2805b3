// Training over several processes from Python: caffe.has_mpi, caffe.has_nccl,
// caffe.parse_ddl_options (DDL's option string, as `caffe train -ddl` reads it) and BVLC's
// caffe.NCCL (python/train.py: one solver per process and GPU).
#include <string>

#include "bindings.hpp"
#include "caffe/parallel/ddl_options.hpp"
#include "caffe/parallel/nccl_solver_sync.hpp"

namespace caffe {
namespace pycaffe {
namespace {

py::dict DdlOptionsDict(const DdlOptions& options) {
  py::dict result;
  result["mode"] = string(1, static_cast<char>(options.algorithm));
  result["mode_name"] = DdlAlgorithmName(options.algorithm);
  result["dims"] = options.dims;
  result["dump_iter"] = options.dump_iter;
  result["dev_sync"] = options.dev_sync;
  result["rebind_iter"] = options.rebind_iter;
  result["dbg_level"] = options.dbg_level;
  result["timeout_s"] = options.timeout_s;
  result["bucket_kb"] = options.bucket_kb;
  result["compress"] = CompressionName(options.compression);
  return result;
}

}  // namespace

void BindDistributedSupport(py::module_& m) {
  m.def("has_mpi", [] {
#ifdef USE_MPI
    return true;
#else
    return false;
#endif
  });
  m.def(
      "parse_ddl_options", [](const string& text) { return DdlOptionsDict(ParseDdlOptions(text)); },
      py::arg("options"));
  // Whether caffe.NCCL works in this build (a GPU build with NCCL).
  m.def("has_nccl", &NcclSolverSyncBuilt);
}

void BindNccl(py::module_& m) {
  py::class_<NcclSolverSync<float>, shared_ptr<NcclSolverSync<float>>>(
      m, "NCCL", py::dynamic_attr(),
      "NCCL(solver, uid): keeps this process's GPU solver in step with the other processes "
      "given the same uid (NCCL.new_uid()); set_solver_count, set_solver_rank and "
      "set_multiprocess(True) come first. bcast() gives every solver rank 0's weights; "
      "solver.add_callback(nccl) averages the gradients over the solvers before each update, "
      "and solver.net.after_backward(nccl) then reduces each layer's as backward produces it.")
      .def(py::init([](shared_ptr<PySolver> solver, const py::bytes& uid) {
             const string id = uid;
             py::gil_scoped_release release;
             return std::make_shared<NcclSolverSync<float>>(solver.get(), id);
           }),
           py::arg("solver"), py::arg("uid"), py::keep_alive<1, 2>())
      .def_static("new_uid", [] { return py::bytes(NcclSolverSync<float>::NewUid()); })
      .def("bcast", &NcclSolverSync<float>::Broadcast, py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("rank", &NcclSolverSync<float>::rank)
      .def_property_readonly("size", &NcclSolverSync<float>::size);
}

}  // namespace pycaffe
}  // namespace caffe
