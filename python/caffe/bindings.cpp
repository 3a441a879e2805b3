// The helpers bindings.hpp declares for more than one of pycaffe's binding files.
#include "bindings.hpp"

namespace caffe {
namespace pycaffe {

string PathArg(const py::object& path) {
  return py::str(py::module_::import("os").attr("fspath")(path)).cast<string>();
}

void KeepWith(py::object owner, py::object kept) {
  if (!py::hasattr(owner, "_callbacks")) owner.attr("_callbacks") = py::list();
  owner.attr("_callbacks").cast<py::list>().append(std::move(kept));
}

}  // namespace pycaffe
}  // namespace caffe
