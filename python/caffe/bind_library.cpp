// caffe.init_log, caffe.log, caffe.layer_type_list and caffe.Timer: libcaffe's logging, its layer
// registry and its wall-clock timer.
#include <string>

#include "bindings.hpp"
#include "caffe/layer_factory.hpp"
#include "caffe/util/benchmark.hpp"

namespace caffe {
namespace pycaffe {

void BindLibrary(py::module_& m) {
  m.def(
      "init_log", [](int level) { FLAGS_minloglevel = level; }, py::arg("level") = 0);
  m.def(
      "log", [](const string& message) { LOG(INFO) << message; }, py::arg("message"));
  m.def("layer_type_list", &LayerRegistry<float>::LayerTypeList);

  py::class_<Timer>(m, "Timer", "Wall-clock timer (start, stop, ms)")
      .def(py::init<>())
      .def("start", &Timer::Start)
      .def("stop", &Timer::Stop)
      .def_property_readonly("ms", &Timer::MilliSeconds);
}

}  // namespace pycaffe
}  // namespace caffe
