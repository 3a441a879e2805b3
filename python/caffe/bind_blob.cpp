// caffe.Blob: libcaffe's float Blob, its data and diff as numpy arrays that are views onto the
// blob's memory.
#include <algorithm>
#include <string>
#include <vector>

#include "bindings.hpp"

namespace caffe {
namespace pycaffe {
namespace {

/// blob.data or blob.diff: a numpy array over the blob's CPU memory (no copy). `owner`, the
/// Python Blob, becomes the array's base, so the blob lives as long as the array. A reshape
/// that grows the blob reallocates its memory, and so does LMS when it first manages the blob
/// (its home moves to pinned memory): take the view again after either.
py::array BlobArray(PyBlob& blob, bool diff, py::handle owner) {
  const vector<py::ssize_t> shape(blob.shape().begin(), blob.shape().end());
  if (blob.count() == 0) return py::array_t<float>(shape);  // nothing to view
  float* values = diff ? blob.mutable_cpu_diff() : blob.mutable_cpu_data();
  return py::array_t<float>(shape, values, owner);
}

/// `blob.data = value`: copies `value` in; it must have the blob's shape exactly (or be a
/// scalar, which fills the blob). blob.data[...] = value broadcasts as numpy does.
void AssignBlob(PyBlob& blob, bool diff, const py::object& value) {
  using FloatArray = py::array_t<float, py::array::c_style | py::array::forcecast>;
  FloatArray array = FloatArray::ensure(value);
  if (!array) {
    PyErr_Clear();
    throw py::type_error(string("cannot assign a ") + py::str(value.get_type()).cast<string>() +
                         " to blob " + (diff ? "diff" : "data") + ": expected a numpy array");
  }
  const vector<int> shape(array.shape(), array.shape() + array.ndim());
  float* target = diff ? blob.mutable_cpu_diff() : blob.mutable_cpu_data();
  if (array.ndim() == 0) {
    std::fill(target, target + blob.count(), *array.data());
    return;
  }
  if (shape != blob.shape()) {
    throw py::value_error("cannot assign an array of shape " + ShapeText(shape) + " to blob " +
                          (diff ? "diff" : "data") + " of shape " + ShapeText(blob.shape()) +
                          "; reshape the blob first (blob.reshape(*shape), then net.reshape())");
  }
  std::copy(array.data(), array.data() + blob.count(), target);
}

}  // namespace

vector<int> ShapeArgs(const py::args& args) {
  py::sequence dims = args;
  if (args.size() == 1 && !py::isinstance<py::int_>(args[0])) dims = args[0].cast<py::sequence>();
  vector<int> shape;
  for (py::handle dim : dims) {
    if (!py::isinstance<py::int_>(dim) && !py::hasattr(dim, "__index__")) {
      throw py::type_error("blob dimensions must be integers, got " + py::repr(dim).cast<string>());
    }
    shape.push_back(py::int_(py::reinterpret_borrow<py::object>(dim)).cast<int>());
  }
  return shape;
}

void BindBlob(py::module_& m) {
  py::class_<PyBlob, shared_ptr<PyBlob>>(m, "Blob",
                                         "An N-D array of float32 values (data) and gradients "
                                         "(diff); .data and .diff are numpy views onto it.")
      .def(py::init(
          [](const py::args& shape) { return std::make_shared<PyBlob>(ShapeArgs(shape)); }))
      .def_property_readonly("shape",
                             [](const PyBlob& blob) { return py::tuple(py::cast(blob.shape())); })
      .def_property_readonly("num", &PyBlob::num)
      .def_property_readonly("channels", &PyBlob::channels)
      .def_property_readonly("height", &PyBlob::height)
      .def_property_readonly("width", &PyBlob::width)
      .def_property_readonly("count", [](const PyBlob& blob) { return blob.count(); })
      .def(
          "reshape", [](PyBlob& blob, const py::args& shape) { blob.Reshape(ShapeArgs(shape)); },
          "reshape(*shape): changes the shape (views taken before may become stale)")
      .def_property(
          "data", [](py::object self) { return BlobArray(self.cast<PyBlob&>(), false, self); },
          [](PyBlob& blob, const py::object& value) { AssignBlob(blob, false, value); })
      .def_property(
          "diff", [](py::object self) { return BlobArray(self.cast<PyBlob&>(), true, self); },
          [](PyBlob& blob, const py::object& value) { AssignBlob(blob, true, value); })
      .def("__repr__",
           [](const PyBlob& blob) { return "<caffe.Blob shape=" + ShapeText(blob.shape()) + ">"; });
}

}  // namespace pycaffe
}  // namespace caffe
