// What the files of pycaffe's compiled core (_caffe.cpp and its bind_*.cpp) share: the float
// types Python sees, the Bind* function each file defines (the module calls them in the order of
// _caffe.cpp), and the few helpers more than one file uses (bindings.cpp, unless named below).
// Internal to the module.
#ifndef CAFFE_PYTHON_BINDINGS_HPP_
#define CAFFE_PYTHON_BINDINGS_HPP_

// Every file converts with the same casters (vectors, numpy arrays): a type converted one way in
// one file and another way in the next would break the one-definition rule.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/common.hpp"
#include "caffe/layer.hpp"
#include "caffe/net.hpp"
#include "caffe/solver.hpp"

namespace caffe {
namespace pycaffe {

namespace py = pybind11;

using PyBlob = Blob<float>;
using PyLayer = Layer<float>;
using PyNet = Net<float>;
using PySolver = Solver<float>;

// ---- What each file binds (_caffe.cpp calls them in order) ----

/// bind_context.cpp: the per-thread context (mode, device, seed, solver count and rank).
void BindContext(py::module_& m);
/// bind_library.cpp: libcaffe's logging, its layer registry and its timer.
void BindLibrary(py::module_& m);
/// bind_distributed.cpp: which of MPI and NCCL this build has, and DDL's option parser.
void BindDistributedSupport(py::module_& m);
/// bind_lms.cpp: caffe.set_lms and caffe.lms_stats (Large Model Support).
void BindLms(py::module_& m);
/// bind_image.cpp: image files through libcaffe's OpenCV decoder.
void BindImage(py::module_& m);
/// bind_blob.cpp: caffe.Blob.
void BindBlob(py::module_& m);
/// bind_layer.cpp: caffe.Layer, its blobs (BlobVec) and the Python layer's glue.
void BindLayer(py::module_& m);
/// bind_net.cpp: caffe.Net.
void BindNet(py::module_& m);
/// bind_solver.cpp: the caffe.Solver base class.
void BindSolver(py::module_& m);
/// bind_distributed.cpp: caffe.NCCL (after Solver, whose add_callback takes it).
void BindNccl(py::module_& m);
/// bind_solver.cpp: SGDSolver, the solvers derived from it, and caffe.get_solver.
void BindSgdSolvers(py::module_& m);
/// bind_ddl.cpp: _caffe._ddl, the compiled half of caffe.ddl (DDL from Python, under mpirun).
void BindDdl(py::module_& m);

// ---- Shared helpers ----

/// "(2, 3, 4)", as numpy prints shapes.
template <typename Int>
string ShapeText(const vector<Int>& shape) {
  std::ostringstream text;
  text << "(";
  for (size_t i = 0; i < shape.size(); ++i) text << (i ? ", " : "") << shape[i];
  text << (shape.size() == 1 ? ",)" : ")");
  return text.str();
}

/// A shape from reshape(*args): ints, or one sequence of ints (bind_blob.cpp).
vector<int> ShapeArgs(const py::args& args);

/// A path argument (str or os.PathLike) as a string (bindings.cpp).
string PathArg(const py::object& path);

/// Keeps `kept` alive as long as the Python object `owner` (in its `_callbacks` list): what a
/// solver or net calls back, which the C++ object only points to (bindings.cpp).
void KeepWith(py::object owner, py::object kept);

/// Plans `net` under the current caffe.set_lms settings, if they ask for LMS (bind_lms.cpp).
void PlanNet(const shared_ptr<PyNet>& net);

/// A solver made from Python, with its nets planned.
template <typename SolverClass>
shared_ptr<SolverClass> PlannedSolver(shared_ptr<SolverClass> solver) {
  PlanNet(solver->net());
  for (const auto& test_net : solver->test_nets()) PlanNet(test_net);
  return solver;
}

/// What Python sees as caffe.Layer: one of a net's C++ layers (listed by Net.layers), or, through
/// a Python subclass, a Python layer that its PythonLayer bound with _bind at setup.
struct LayerHandle {
  shared_ptr<PyLayer> owner;  // C++ layers: keeps the layer alive while Python holds it
  PyLayer* layer = nullptr;   // null: a Python layer not set up yet, or whose net is gone
  bool python = false;        // a Python layer: setup/reshape/forward/backward are its own

  PyLayer& get() const {
    if (layer == nullptr) {
      throw Error(
          "this caffe.Layer is not part of a net: a Python layer gets its blobs at "
          "setup, and loses them when its net is deleted");
    }
    return *layer;
  }
};

}  // namespace pycaffe
}  // namespace caffe

#endif  // CAFFE_PYTHON_BINDINGS_HPP_
