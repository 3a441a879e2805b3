// caffe.Layer and a layer's blobs (caffe.BlobVec): the C++ layers of a net, and the base class of
// Python layers, which the Python layer type (src/caffe/layers/python_layer.cpp) binds to their
// C++ side (_bind, _wrap_blobs) and calls with the GIL taken back.
#include <string>
#include <vector>

#include "bindings.hpp"
#include "caffe/layers/python_layer.hpp"

namespace caffe {
namespace pycaffe {
namespace {

/// layer.blobs: the learned blobs of a layer, looked up on each access (a Python layer adds
/// its own with add_blob).
struct BlobVec {
  py::object handle;  // the caffe.Layer: keeps a C++ layer alive
  vector<shared_ptr<PyBlob>>& blobs() const { return handle.cast<LayerHandle&>().get().blobs(); }
};

/// For a Python layer's base methods: the subclass must define this one.
[[noreturn]] void MissingMethod(const char* method) {
  throw py::type_error(string("a Python layer (subclass of caffe.Layer) must define ") + method +
                       "()");
}

/// The C++ blobs of a Python list of caffe.Blob.
Blobs<float> BlobList(const py::sequence& list) {
  Blobs<float> blobs;
  for (py::handle item : list) blobs.push_back(item.cast<PyBlob*>());
  return blobs;
}

/// caffe._wrap_blobs (a Python layer's bottom and top) and caffe.BlobVec.
void BindBlobVec(py::module_& m) {
  m.def("_wrap_blobs", [](py::capsule capsule) {
    if (string(capsule.name() ? capsule.name() : "") != kPythonBlobsCapsuleName) {
      throw py::type_error("_wrap_blobs expects a Blobs<float> capsule");
    }
    const auto* blobs = static_cast<const Blobs<float>*>(capsule.get_pointer());
    py::list list;
    for (PyBlob* blob : *blobs) list.append(py::cast(blob, py::return_value_policy::reference));
    return list;
  });

  py::class_<BlobVec>(m, "BlobVec", "A layer's learned blobs (list-like)")
      .def("__len__", [](const BlobVec& vec) { return vec.blobs().size(); })
      .def("__getitem__",
           [](const BlobVec& vec, py::ssize_t index) {
             auto& blobs = vec.blobs();
             const auto size = static_cast<py::ssize_t>(blobs.size());
             if (index < 0) index += size;
             if (index < 0 || index >= size) throw py::index_error("blob index out of range");
             return blobs[index];
           })
      .def("__iter__", [](const BlobVec& vec) { return py::iter(py::cast(vec.blobs())); })
      .def(
          "add_blob",
          [](BlobVec& vec, const py::args& shape) {
            vec.blobs().push_back(std::make_shared<PyBlob>(ShapeArgs(shape)));
          },
          "add_blob(*shape): appends a learned blob of that shape (in a Python layer's setup)")
      .def("__repr__", [](const BlobVec& vec) {
        return "<caffe.BlobVec of " + std::to_string(vec.blobs().size()) + " blobs>";
      });
}

/// layer._bind(capsule): binds a Python layer to its C++ PythonLayer (None: unbinds it).
void BindToPythonLayer(LayerHandle& handle, const py::object& capsule) {
  if (capsule.is_none()) {
    handle.layer = nullptr;
    return;
  }
  auto layer_capsule = capsule.cast<py::capsule>();
  if (string(layer_capsule.name() ? layer_capsule.name() : "") != kPythonLayerCapsuleName) {
    throw py::type_error("_bind expects a Layer<float> capsule");
  }
  handle.layer = static_cast<PyLayer*>(layer_capsule.get_pointer());
  handle.python = true;
}

}  // namespace

void BindLayer(py::module_& m) {
  BindBlobVec(m);
  py::class_<LayerHandle>(m, "Layer",
                          "A layer of a net. Subclass it to write a Python layer (type: "
                          "\"Python\"): define setup, reshape, forward and backward.")
      .def(py::init([](const py::args&, const py::kwargs&) { return LayerHandle{}; }))
      .def_property_readonly("blobs",
                             [](py::object self) {
                               self.cast<LayerHandle&>().get();  // bound to a layer?
                               return BlobVec{self};
                             })
      .def_property_readonly("type",
                             [](const LayerHandle& handle) {
                               return handle.layer ? string(handle.layer->type())
                                                   : string("Python");
                             })
      .def("setup",
           [](LayerHandle& handle, const py::sequence& bottom, const py::sequence& top) {
             if (handle.python) return;  // optional in a Python layer
             handle.get().LayerSetUp(BlobList(bottom), BlobList(top));
           })
      .def("reshape",
           [](LayerHandle& handle, const py::sequence& bottom, const py::sequence& top) {
             if (handle.python) MissingMethod("reshape");
             handle.get().Reshape(BlobList(bottom), BlobList(top));
           })
      .def("forward",
           [](LayerHandle& handle, const py::sequence& bottom, const py::sequence& top) {
             if (handle.python) MissingMethod("forward");
             return handle.get().Forward(BlobList(bottom), BlobList(top));
           })
      .def("backward",
           [](LayerHandle& handle, const py::sequence& top, const vector<bool>& propagate_down,
              const py::sequence& bottom) {
             if (handle.python) MissingMethod("backward");
             handle.get().Backward(BlobList(top), propagate_down, BlobList(bottom));
           })
      .def("_bind", &BindToPythonLayer);
}

}  // namespace pycaffe
}  // namespace caffe
