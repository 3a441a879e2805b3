// _caffe: the compiled core of pycaffe. It wraps libcaffe's float Blob (its data and diff as
// numpy arrays that are views onto the blob's memory), Layer, Net and the solvers, the per-thread
// context (mode, device, random seed, solver count/rank) and caffe::Error (raised as caffe.Error,
// a RuntimeError). pycaffe.py builds BVLC's Python-level API (net.blobs, net.forward(**inputs),
// forward_all, ...) on top. Calls that run a net or a solver release the GIL; the Python layer
// type (src/caffe/layers/python_layer.cpp) takes it back for each call into Python.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "caffe/log_prefix.hpp"
#include "caffe/blob.hpp"
#include "caffe/common.hpp"
#include "caffe/layer.hpp"
#include "caffe/layer_factory.hpp"
#include "caffe/layers/memory_data_layer.hpp"
#include "caffe/layers/python_layer.hpp"
#include "caffe/lms/lms_options.hpp"
#include "caffe/lms/session.hpp"
#include "caffe/net.hpp"
#include "caffe/parallel/ddl_options.hpp"
#include "caffe/parallel/nccl_solver_sync.hpp"
#include "caffe/sgd_solvers.hpp"
#include "caffe/solver.hpp"
#include "caffe/solver_factory.hpp"
#include "caffe/util/benchmark.hpp"
#include "caffe/util/blas_core.hpp"
#include "caffe/util/image_io.hpp"
#include "caffe/util/io.hpp"
#include "caffe/util/upgrade_proto.hpp"

#ifndef CAFFE_VERSION_STRING
#define CAFFE_VERSION_STRING "1.0.0"
#endif

namespace py = pybind11;

namespace caffe {
namespace {

using PyBlob = Blob<float>;
using PyLayer = Layer<float>;
using PyNet = Net<float>;
using PySolver = Solver<float>;

// ---- Blob ------------------------------------------------------------------------------------

/// "(2, 3, 4)", as numpy prints shapes.
template <typename Int>
string ShapeText(const vector<Int>& shape) {
  std::ostringstream text;
  text << "(";
  for (size_t i = 0; i < shape.size(); ++i) text << (i ? ", " : "") << shape[i];
  text << (shape.size() == 1 ? ",)" : ")");
  return text.str();
}

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

/// A shape from reshape(*args): ints, or one sequence of ints.
vector<int> ShapeArgs(const py::args& args) {
  py::sequence dims = args;
  if (args.size() == 1 && !py::isinstance<py::int_>(args[0])) dims = args[0].cast<py::sequence>();
  vector<int> shape;
  for (py::handle dim : dims) {
    if (!py::isinstance<py::int_>(dim) && !py::hasattr(dim, "__index__")) {
      throw py::type_error("blob dimensions must be integers, got " +
                           py::repr(dim).cast<string>());
    }
    shape.push_back(py::int_(py::reinterpret_borrow<py::object>(dim)).cast<int>());
  }
  return shape;
}

/// The C++ blobs of a Python list of caffe.Blob.
Blobs<float> BlobList(const py::sequence& list) {
  Blobs<float> blobs;
  for (py::handle item : list) blobs.push_back(item.cast<PyBlob*>());
  return blobs;
}

// ---- Layer -----------------------------------------------------------------------------------

/// What Python sees as caffe.Layer: one of a net's C++ layers (listed by Net.layers), or, through
/// a Python subclass, a Python layer that its PythonLayer bound with _bind at setup.
struct LayerHandle {
  shared_ptr<PyLayer> owner;  // C++ layers: keeps the layer alive while Python holds it
  PyLayer* layer = nullptr;   // null: a Python layer not set up yet, or whose net is gone
  bool python = false;        // a Python layer: setup/reshape/forward/backward are its own

  PyLayer& get() const {
    if (layer == nullptr) {
      throw Error("this caffe.Layer is not part of a net: a Python layer gets its blobs at "
                  "setup, and loses them when its net is deleted");
    }
    return *layer;
  }
};

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

// ---- Net -------------------------------------------------------------------------------------

string PathArg(const py::object& path) {
  return py::str(py::module_::import("os").attr("fspath")(path)).cast<string>();
}

// ---- Large Model Support ---------------------------------------------------------------------

/// caffe.set_lms's state: the session of the thread that called it, and the plans of the nets
/// made since, each kept while its net lives (the net's passes call into it). Never destroyed:
/// tearing down CUDA objects while the interpreter exits is not safe.
struct PyLms {
  std::unique_ptr<lms::Session> session;
  vector<std::pair<std::weak_ptr<PyNet>, shared_ptr<lms::Planner<float>>>> plans;
};

PyLms& LmsState() {
  static PyLms* state = new PyLms;
  return *state;
}

/// caffe.set_lms(lms, lms_frac, lms_prefetch, gpu_mem_limit): the flags of `caffe train`, for
/// the nets and solvers this thread makes from now on. True when a manager was installed (a GPU
/// mode run asking for LMS or a budget).
bool SetLms(int64_t threshold_kb, double frac, int prefetch, const py::object& mem_limit) {
  const string limit = mem_limit.is_none() ? "" : py::str(mem_limit).cast<string>();
  const lms::Options options =
      lms::MakeOptions(threshold_kb, frac, prefetch, limit, std::getenv(lms::kMemLimitEnv));
  PyLms& state = LmsState();
  state.session.reset();  // the nets planned so far keep their plans and manager
  const int gpu = Caffe::mode() == Caffe::GPU ? Caffe::device() : -1;
  state.session = std::make_unique<lms::Session>(options, gpu);
  return state.session->installed();
}

/// Plans `net` under the current caffe.set_lms settings, if they ask for LMS. Callers make nets
/// with the GIL released; the plans are shared by every Python thread, so the GIL guards them.
void PlanNet(const shared_ptr<PyNet>& net) {
  py::gil_scoped_acquire gil;
  PyLms& state = LmsState();
  if (!net || !state.session || !state.session->planning()) return;
  auto& plans = state.plans;
  plans.erase(std::remove_if(plans.begin(), plans.end(),
                             [](const auto& plan) { return plan.first.expired(); }),
              plans.end());
  plans.emplace_back(net, state.session->Plan(net.get(), /*attach=*/true));
}

/// A solver made from Python, with its nets planned.
template <typename SolverClass>
shared_ptr<SolverClass> PlannedSolver(shared_ptr<SolverClass> solver) {
  PlanNet(solver->net());
  for (const auto& test_net : solver->test_nets()) PlanNet(test_net);
  return solver;
}

/// Net(network_file, phase), Net(network_file, weights, phase), and the keyword form
/// Net(network_file, phase=, level=0, stages=(), weights=None), as BVLC's pycaffe takes them.
shared_ptr<PyNet> MakeNet(const py::args& args, const py::kwargs& kwargs) {
  py::object file, phase, weights = py::none();
  int level = 0;
  vector<string> stages;
  if (args.size() > 3) throw py::type_error("Net() takes at most 3 positional arguments");
  if (args.size() >= 1) file = args[0];
  if (args.size() == 2) phase = args[1];
  if (args.size() == 3) {
    weights = args[1];
    phase = args[2];
  }
  for (auto item : kwargs) {
    const string key = item.first.cast<string>();
    py::object value = py::reinterpret_borrow<py::object>(item.second);
    if (key == "network_file") {
      file = value;
    } else if (key == "phase") {
      phase = value;
    } else if (key == "weights") {
      weights = value;
    } else if (key == "level") {
      level = value.cast<int>();
    } else if (key == "stages") {
      stages = value.cast<vector<string>>();
    } else {
      throw py::type_error("Net() got an unexpected keyword argument '" + key +
                           "'; it takes network_file, phase, weights, level, stages");
    }
  }
  if (!file) throw py::type_error("Net() needs the network file (a .prototxt)");
  if (!phase || phase.is_none()) {
    throw py::type_error("Net() needs a phase: caffe.TRAIN or caffe.TEST");
  }
  if (!py::isinstance<py::int_>(phase) && !py::hasattr(phase, "__index__")) {
    throw py::type_error("phase must be caffe.TRAIN or caffe.TEST, got " +
                         py::repr(phase).cast<string>());
  }
  const int phase_value = py::int_(phase).cast<int>();
  if (phase_value != TRAIN && phase_value != TEST) {
    throw py::value_error("phase must be caffe.TRAIN (0) or caffe.TEST (1), got " +
                          std::to_string(phase_value));
  }
  const string file_path = PathArg(file);
  const string weights_path = weights.is_none() ? "" : PathArg(weights);
  py::gil_scoped_release release;
  auto net = std::make_shared<PyNet>(file_path, static_cast<Phase>(phase_value), level, &stages);
  if (!weights_path.empty()) net->CopyTrainedLayersFrom(weights_path);
  PlanNet(net);
  return net;
}

/// net.layers: a caffe.Layer per C++ layer; a Python layer's own object for Python layers.
py::list NetLayers(const PyNet& net) {
  py::list layers;
  for (const shared_ptr<PyLayer>& layer : net.layers()) {
    auto* python_layer = dynamic_cast<PythonLayer<float>*>(layer.get());
    if (python_layer != nullptr && python_layer->python_object() != nullptr) {
      layers.append(py::reinterpret_borrow<py::object>(python_layer->python_object()));
    } else {
      layers.append(py::cast(LayerHandle{layer, layer.get(), false}));
    }
  }
  return layers;
}

/// net.set_input_arrays(data, labels) for a net whose first layer is MemoryData. The arrays are
/// used in place; pycaffe.py keeps references to them on the net.
void SetInputArrays(PyNet& net, py::array_t<float, py::array::c_style> data,
                    py::array_t<float, py::array::c_style> labels) {
  auto layer = net.layers().empty()
                   ? nullptr
                   : std::dynamic_pointer_cast<MemoryDataLayer<float>>(net.layers()[0]);
  if (!layer) {
    throw py::value_error("set_input_arrays needs a net whose first layer is MemoryData");
  }
  if (data.ndim() != 4) {
    throw py::value_error("set_input_arrays: data must be 4-D (N, C, H, W), got shape " +
                          ShapeText(vector<py::ssize_t>(data.shape(), data.shape() + data.ndim())));
  }
  const vector<int> item{static_cast<int>(data.shape(1)), static_cast<int>(data.shape(2)),
                         static_cast<int>(data.shape(3))};
  const vector<int> expected{layer->channels(), layer->height(), layer->width()};
  if (item != expected) {
    throw py::value_error("set_input_arrays: data items are " + ShapeText(item) +
                          ", but MemoryData layer '" + layer->layer_param().name() + "' takes " +
                          ShapeText(expected));
  }
  const int num = static_cast<int>(data.shape(0));
  if (labels.size() != num) {
    throw py::value_error("set_input_arrays: " + std::to_string(num) + " data items but " +
                          std::to_string(labels.size()) + " labels");
  }
  if (num == 0 || num % layer->batch_size() != 0) {
    throw py::value_error("set_input_arrays: the number of items (" + std::to_string(num) +
                          ") must be a positive multiple of the batch size (" +
                          std::to_string(layer->batch_size()) + ")");
  }
  layer->Reset(data.mutable_data(), labels.mutable_data(), num);
}

/// net.before_forward(fn), after_forward, before_backward, after_backward: fn(layer_index)
/// around each layer's pass. The net only points to its callbacks and nothing tells pycaffe when
/// a net (say a solver's, reached through a temporary wrapper) goes away, so each callback lives
/// as long as the process, as BVLC's did.
class PythonNetCallback : public PyNet::Callback {
 public:
  explicit PythonNetCallback(py::object run) : run_(std::move(run)) {}
  void run(int layer) override {
    py::gil_scoped_acquire gil;
    run_(layer);
  }

 private:
  py::object run_;
};

template <void (PyNet::*Add)(PyNet::Callback*)>
void AddNetCallback(PyNet& net, py::object run) {
  if (!PyCallable_Check(run.ptr())) {
    throw py::type_error("a net callback must be callable with the layer's index");
  }
  (net.*Add)(new PythonNetCallback(std::move(run)));  // kept for the process's life (above)
}

/// Keeps `kept` alive as long as the Python object `owner` (in its `_callbacks` list): what a
/// solver or net calls back, which the C++ object only points to.
void KeepWith(py::object owner, py::object kept) {
  if (!py::hasattr(owner, "_callbacks")) owner.attr("_callbacks") = py::list();
  owner.attr("_callbacks").cast<py::list>().append(std::move(kept));
}

/// Checks a layer index from Python (libcaffe CHECKs them: a bad one would abort the process).
int LayerIndex(const PyNet& net, int index, const char* what) {
  const int size = static_cast<int>(net.layers().size());
  if (index < 0 || index >= size) {
    throw py::index_error(string(what) + " layer index " + std::to_string(index) +
                          " out of range: the net has " + std::to_string(size) + " layers");
  }
  return index;
}

// ---- Solver ----------------------------------------------------------------------------------

/// solver.add_callback(on_start, on_gradients_ready): Python functions called before each
/// iteration's forward/backward and before each update.
class PythonSolverCallback : public PySolver::Callback {
 public:
  PythonSolverCallback(py::object on_start, py::object on_gradients_ready)
      : on_start_(std::move(on_start)), on_gradients_ready_(std::move(on_gradients_ready)) {}
  ~PythonSolverCallback() override {
    py::gil_scoped_acquire gil;
    on_start_ = py::object();
    on_gradients_ready_ = py::object();
  }
  void on_start() override {
    py::gil_scoped_acquire gil;
    on_start_();
  }
  void on_gradients_ready() override {
    py::gil_scoped_acquire gil;
    on_gradients_ready_();
  }

 private:
  py::object on_start_, on_gradients_ready_;
};

shared_ptr<PySolver> MakeSolver(const py::object& file) {
  SolverParameter param;
  ReadSolverParamsFromTextFile(PathArg(file), &param);
  py::gil_scoped_release release;
  return PlannedSolver(shared_ptr<PySolver>(SolverRegistry<float>::CreateSolver(param)));
}

template <typename SolverClass>
void AddSolverClass(py::module_& m, const char* name) {
  py::class_<SolverClass, SGDSolver<float>, shared_ptr<SolverClass>>(m, name, py::dynamic_attr())
      .def(py::init([](const py::object& file) {
             const string path = PathArg(file);
             py::gil_scoped_release release;
             return PlannedSolver(std::make_shared<SolverClass>(path));
           }),
           py::arg("solver_file"));
}

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
  return result;
}

}  // namespace
}  // namespace caffe

PYBIND11_MODULE(_caffe, m) {
  using namespace caffe;  // NOLINT(build/namespaces)
  m.doc() = "The compiled core of pycaffe; use it through the caffe package.";

  if (!google::IsGoogleLoggingInitialized()) {
    UseBvlcLogPrefix();
    FLAGS_logtostderr = true;
    google::InitGoogleLogging("pycaffe");
  }
  FitBlasCoreToCpu();

  // caffe::Error (and its subclasses, e.g. CommError) -> caffe.Error, a RuntimeError.
  py::register_exception<Error>(m, "Error", PyExc_RuntimeError);

  m.attr("__version__") = CAFFE_VERSION_STRING;

  // Context: per thread, as in libcaffe (a net runs in the thread that calls it).
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
  m.def(
      "init_log", [](int level) { FLAGS_minloglevel = level; }, py::arg("level") = 0);
  m.def("log", [](const string& message) { LOG(INFO) << message; }, py::arg("message"));
  m.def("layer_type_list", &LayerRegistry<float>::LayerTypeList);
  // Whether caffe.NCCL works in this build (a GPU build with NCCL).
  m.def("has_nccl", &NcclSolverSyncBuilt);
  m.def("set_lms", &SetLms, py::arg("lms") = -1, py::arg("lms_frac") = 0.0,
        py::arg("lms_prefetch") = 1, py::arg("gpu_mem_limit") = py::none(),
        "set_lms(lms=-1, lms_frac=0.0, lms_prefetch=1, gpu_mem_limit=None): Large Model "
        "Support as `caffe train -lms ... -lms_frac ... -gpu_mem_limit ...` (docs/LMS.md) for "
        "the nets and solvers this thread makes from now on, on the GPU of set_device in GPU "
        "mode. lms: buffers of at least this many KB live in host memory (-1 off, 0 every "
        "buffer); gpu_mem_limit: bytes or '16G'. Returns whether it applies (False in CPU mode, "
        "or when nothing is asked for).");
  m.def(
      "lms_stats",
      []() -> py::object {
        const PyLms& state = LmsState();
        if (!state.session || !state.session->installed()) return py::none();
        return py::str(state.session->StatsLine());
      },
      "The counters line of caffe.set_lms's manager ('[LMS] swapped in ...'), or None.");

  // Image files through libcaffe's OpenCV decoder, for caffe.io.load_image.
  m.def("image_support", &ImageSupportAvailable);
  m.def(
      "_read_image",
      [](const py::object& file, bool color) {
        const string path = PathArg(file);
        Datum datum;
        {
          py::gil_scoped_release release;
          ReadImageToDatum(path, 0, 0, 0, color, "", &datum);
        }
        const int channels = datum.channels(), height = datum.height(), width = datum.width();
        py::array_t<uint8_t> image({height, width, channels});
        auto pixels = image.mutable_unchecked<3>();
        const auto* bytes = reinterpret_cast<const uint8_t*>(datum.data().data());
        for (int c = 0; c < channels; ++c) {
          // Datum holds OpenCV's B, G, R order; numpy images are R, G, B.
          const int source = channels == 3 ? 2 - c : c;
          for (int h = 0; h < height; ++h) {
            for (int w = 0; w < width; ++w) {
              pixels(h, w, c) = bytes[(static_cast<size_t>(source) * height + h) * width + w];
            }
          }
        }
        return image;
      },
      py::arg("filename"), py::arg("color") = true,
      "_read_image(filename, color=True): H x W x C uint8, RGB (or gray), decoded by OpenCV");

  py::class_<Timer>(m, "Timer", "Wall-clock timer (start, stop, ms)")
      .def(py::init<>())
      .def("start", &Timer::Start)
      .def("stop", &Timer::Stop)
      .def_property_readonly("ms", &Timer::MilliSeconds);

  // ---- Blob ----
  py::class_<PyBlob, shared_ptr<PyBlob>>(m, "Blob",
                                         "An N-D array of float32 values (data) and gradients "
                                         "(diff); .data and .diff are numpy views onto it.")
      .def(py::init([](const py::args& shape) { return std::make_shared<PyBlob>(ShapeArgs(shape)); }))
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
      .def("__repr__", [](const PyBlob& blob) {
        return "<caffe.Blob shape=" + ShapeText(blob.shape()) + ">";
      });

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
      .def("__iter__",
           [](const BlobVec& vec) { return py::iter(py::cast(vec.blobs())); })
      .def(
          "add_blob",
          [](BlobVec& vec, const py::args& shape) {
            vec.blobs().push_back(std::make_shared<PyBlob>(ShapeArgs(shape)));
          },
          "add_blob(*shape): appends a learned blob of that shape (in a Python layer's setup)")
      .def("__repr__", [](const BlobVec& vec) {
        return "<caffe.BlobVec of " + std::to_string(vec.blobs().size()) + " blobs>";
      });

  // ---- Layer ----
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
      .def("_bind", [](LayerHandle& handle, const py::object& capsule) {
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
      });

  // ---- Net ----
  py::class_<PyNet, shared_ptr<PyNet>>(m, "Net", py::dynamic_attr(),
                                       "Net(network_file, phase, level=0, stages=(), "
                                       "weights=None), or Net(network_file, weights, phase)")
      .def(py::init(&MakeNet))
      .def_property_readonly("name", &PyNet::name)
      .def_property_readonly("_phase", [](const PyNet& net) { return static_cast<int>(net.phase()); })
      .def(
          "_forward",
          [](PyNet& net, int start, int end) {
            LayerIndex(net, start, "start");
            LayerIndex(net, end, "end");
            py::gil_scoped_release release;
            return net.ForwardFromTo(start, end);
          },
          py::arg("start"), py::arg("end"))
      .def(
          "_backward",
          [](PyNet& net, int start, int end) {
            LayerIndex(net, start, "start");
            LayerIndex(net, end, "end");
            py::gil_scoped_release release;
            net.BackwardFromTo(start, end);
          },
          py::arg("start"), py::arg("end"))
      .def("reshape", &PyNet::Reshape, py::call_guard<py::gil_scoped_release>())
      .def("clear_param_diffs", &PyNet::ClearParamDiffs,
           "zeroes every learned parameter's gradient (before accumulating new ones by hand)")
      .def(
          "copy_from",
          [](PyNet& net, const py::object& file) {
            const string path = PathArg(file);
            py::gil_scoped_release release;
            net.CopyTrainedLayersFrom(path);
          },
          py::arg("weights_file"))
      .def(
          "share_with", [](PyNet& net, const PyNet& other) { net.ShareTrainedLayersWith(&other); },
          py::arg("other"))
      .def(
          "save",
          [](const PyNet& net, const py::object& file) {
            const string path = PathArg(file);
            py::gil_scoped_release release;
            NetParameter param;
            net.ToProto(&param, false);
            WriteProtoToBinaryFile(param, path);
          },
          py::arg("filename"))
      .def(
          "save_hdf5",
          [](const PyNet& net, const py::object& file) {
            const string path = PathArg(file);
            py::gil_scoped_release release;
            net.ToHDF5(path, false);
          },
          py::arg("filename"))
      .def(
          "load_hdf5",
          [](PyNet& net, const py::object& file) {
            const string path = PathArg(file);
            py::gil_scoped_release release;
            net.CopyTrainedLayersFromHDF5(path);
          },
          py::arg("filename"))
      .def_property_readonly("_blobs", [](const PyNet& net) { return net.blobs(); })
      .def_property_readonly("_blob_names", &PyNet::blob_names)
      .def_property_readonly("_layer_names", &PyNet::layer_names)
      .def_property_readonly("layers", &NetLayers)
      .def_property_readonly("_inputs", &PyNet::input_blob_indices)
      .def_property_readonly("_outputs", &PyNet::output_blob_indices)
      .def_property_readonly("_blob_loss_weights", &PyNet::blob_loss_weights)
      .def(
          "_top_ids",
          [](const PyNet& net, int index) { return net.top_ids(LayerIndex(net, index, "top_ids")); },
          py::arg("layer_index"))
      .def(
          "_bottom_ids",
          [](const PyNet& net, int index) {
            return net.bottom_ids(LayerIndex(net, index, "bottom_ids"));
          },
          py::arg("layer_index"))
      .def("_set_input_arrays", &SetInputArrays, py::arg("data").noconvert(),
           py::arg("labels").noconvert())
      .def("before_forward", &AddNetCallback<&PyNet::add_before_forward>, py::arg("run"),
           "run(layer_index) before each layer's forward")
      .def("after_forward", &AddNetCallback<&PyNet::add_after_forward>, py::arg("run"),
           "run(layer_index) after each layer's forward")
      .def("before_backward", &AddNetCallback<&PyNet::add_before_backward>, py::arg("run"),
           "run(layer_index) before each layer's backward")
      // BVLC's train.py, for layer_wise_reduce: the NCCL object reduces each layer's gradients
      // as backward produces them. The net only points to it: it must be its solver's net, and
      // the solver (add_callback) and this net object keep it alive.
      .def(
          "after_backward",
          [](py::object self, const shared_ptr<NcclSolverSync<float>>& nccl) {
            PyNet& net = self.cast<PyNet&>();
            if (nccl->solver()->net().get() != &net) {
              throw py::value_error(
                  "net.after_backward(nccl): nccl was made for another solver's net; use "
                  "solver.net.after_backward(nccl) with the solver given to caffe.NCCL");
            }
            if (!py::hasattr(py::cast(nccl), "_added_to_solver")) {
              throw py::value_error(
                  "net.after_backward(nccl): call solver.add_callback(nccl) first (it reduces "
                  "what the layers have not)");
            }
            net.add_after_backward(nccl.get());
            KeepWith(self, py::cast(nccl));
          },
          py::arg("nccl"))
      .def("after_backward", &AddNetCallback<&PyNet::add_after_backward>, py::arg("run"),
           "run(layer_index) after each layer's backward");

  // ---- Solvers ----
  py::class_<PySolver, shared_ptr<PySolver>>(m, "Solver", py::dynamic_attr())
      .def_property_readonly("net", &PySolver::net)
      .def_property_readonly("test_nets", [](PySolver& solver) { return solver.test_nets(); })
      .def_property_readonly("iter", &PySolver::iter)
      .def_property_readonly("max_iter",
                             [](const PySolver& solver) { return solver.param().max_iter(); })
      .def_property_readonly("type", [](const PySolver& solver) { return solver.type(); })
      .def_property_readonly("smoothed_loss", &PySolver::smoothed_loss)
      .def_property_readonly("_param_bytes",
                             [](const PySolver& solver) {
                               string serialized;
                               solver.param().SerializeToString(&serialized);
                               return py::bytes(serialized);
                             })
      .def(
          "solve",
          [](PySolver& solver, const py::object& resume_file) {
            const string path = resume_file.is_none() ? "" : PathArg(resume_file);
            py::gil_scoped_release release;
            solver.Solve(path.empty() ? nullptr : path.c_str());
          },
          py::arg("resume_file") = py::none())
      .def("step", &PySolver::Step, py::arg("iters"), py::call_guard<py::gil_scoped_release>())
      .def(
          "restore",
          [](PySolver& solver, const py::object& file) {
            const string path = PathArg(file);
            py::gil_scoped_release release;
            solver.Restore(path.c_str());
          },
          py::arg("state_file"))
      .def("snapshot", &PySolver::Snapshot, py::call_guard<py::gil_scoped_release>())
      .def("apply_update", &PySolver::ApplyUpdate, py::call_guard<py::gil_scoped_release>())
      .def(
          "share_weights",
          [](PySolver& solver, PyNet& net) { net.ShareTrainedLayersWith(solver.net().get()); },
          py::arg("net"),
          "share_weights(net): net's layers use the solver's net's weights (the same memory, "
          "as net.share_with(solver.net))")
      .def(
          "add_callback",
          [](py::object self, py::object on_start, py::object on_gradients_ready) {
            auto callback =
                std::make_unique<PythonSolverCallback>(on_start, on_gradients_ready);
            self.cast<PySolver&>().add_callback(callback.get());
            // The Python solver owns the callback (the C++ solver only points to it).
            KeepWith(self, py::capsule(callback.release(), [](void* pointer) {
                       delete static_cast<PythonSolverCallback*>(pointer);
                     }));
          },
          py::arg("on_start"), py::arg("on_gradients_ready"))
      .def(
          "add_callback",
          [](py::object self, shared_ptr<NcclSolverSync<float>> nccl) {
            if (nccl->solver() != &self.cast<PySolver&>()) {
              throw py::value_error(
                  "solver.add_callback(nccl): nccl was made for another solver");
            }
            self.cast<PySolver&>().add_callback(nccl.get());
            py::object kept = py::cast(nccl);
            kept.attr("_added_to_solver") = true;
            KeepWith(self, kept);
          },
          py::arg("callback"),
          "add_callback(nccl): the NCCL object reduces the gradients before each update");

  // BVLC's caffe.NCCL (python/train.py): one solver per process and GPU.
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
  py::class_<SGDSolver<float>, PySolver, shared_ptr<SGDSolver<float>>>(m, "SGDSolver",
                                                                       py::dynamic_attr())
      .def(py::init([](const py::object& file) {
             const string path = PathArg(file);
             py::gil_scoped_release release;
             return PlannedSolver(std::make_shared<SGDSolver<float>>(path));
           }),
           py::arg("solver_file"))
      .def_property_readonly("lr", &SGDSolver<float>::GetLearningRate);
  AddSolverClass<NesterovSolver<float>>(m, "NesterovSolver");
  AddSolverClass<AdaGradSolver<float>>(m, "AdaGradSolver");
  AddSolverClass<RMSPropSolver<float>>(m, "RMSPropSolver");
  AddSolverClass<AdaDeltaSolver<float>>(m, "AdaDeltaSolver");
  AddSolverClass<AdamSolver<float>>(m, "AdamSolver");
  m.def("get_solver", &MakeSolver, py::arg("solver_file"),
        "The solver a solver .prototxt describes (its `type:`), e.g. an SGDSolver");
}
