// caffe.set_mode_cpu, set_mode_gpu, set_device, set_random_seed, gpu_available and the solver
// count, rank and multiprocess settings: libcaffe's context, which is per thread (a net runs in
// the thread that calls it); and set_precision (for the whole process, as `caffe -precision`).
#include "bindings.hpp"
#include "caffe/kernels/bf16_gemm.hpp"
#include "caffe/net/layer_precision.hpp"

namespace caffe {
namespace pycaffe {

void BindContext(py::module_& m) {
  m.def("set_mode_cpu", [] { Caffe::set_mode(Caffe::CPU); });
  m.def("set_mode_gpu", [] {
    CAFFE_CHECK(Caffe::GpuAvailable())
        << "set_mode_gpu: no usable GPU (a CPU-only build, or no device visible); "
           "use caffe.set_mode_cpu()";
    Caffe::set_mode(Caffe::GPU);
  });
  m.def("set_device", &Caffe::SetDevice, py::arg("device_id"));
  m.def("set_random_seed", &Caffe::set_random_seed, py::arg("seed"));
  m.def("gpu_available", &Caffe::GpuAvailable);
  m.def("set_solver_count", &Caffe::set_solver_count, py::arg("count"));
  m.def("solver_count", &Caffe::solver_count);
  m.def("set_solver_rank", &Caffe::set_solver_rank, py::arg("rank"));
  m.def("solver_rank", &Caffe::solver_rank);
  m.def("set_multiprocess", &Caffe::set_multiprocess, py::arg("multiprocess"));
  m.def("set_precision", &SetPrecisionFlag, py::arg("precision"));
  m.def("cpu_has_bf16", &CpuHasBf16Math);
}

}  // namespace pycaffe
}  // namespace caffe
