// caffe.Net: made from a .prototxt (and weights) as BVLC's pycaffe takes them, run layer range by
// layer range, saved and loaded, inspected (blobs, layers, inputs, outputs) and called back around
// each layer's pass. pycaffe.py builds BVLC's Python-level API (net.blobs, net.forward(**inputs),
// forward_all, ...) on top. Calls that run the net release the GIL.
#include <string>
#include <vector>

#include "bindings.hpp"
#include "caffe/io/io.hpp"
#include "caffe/layers/memory_data_layer.hpp"
#include "caffe/layers/python_layer.hpp"
#include "caffe/parallel/nccl_solver_sync.hpp"

namespace caffe {
namespace pycaffe {
namespace {

using PyNetClass = py::class_<PyNet, shared_ptr<PyNet>>;

/// Net()'s arguments, positional or by keyword, before they are checked.
struct NetArgs {
  py::object file, phase, weights = py::none();
  int level = 0;
  vector<string> stages;
};

/// Net(network_file, phase), Net(network_file, weights, phase), and the keyword form
/// Net(network_file, phase=, level=0, stages=(), weights=None).
NetArgs ReadNetArgs(const py::args& args, const py::kwargs& kwargs) {
  NetArgs given;
  if (args.size() > 3) throw py::type_error("Net() takes at most 3 positional arguments");
  if (args.size() >= 1) given.file = args[0];
  if (args.size() == 2) given.phase = args[1];
  if (args.size() == 3) {
    given.weights = args[1];
    given.phase = args[2];
  }
  for (auto item : kwargs) {
    const string key = item.first.cast<string>();
    py::object value = py::reinterpret_borrow<py::object>(item.second);
    if (key == "network_file") {
      given.file = value;
    } else if (key == "phase") {
      given.phase = value;
    } else if (key == "weights") {
      given.weights = value;
    } else if (key == "level") {
      given.level = value.cast<int>();
    } else if (key == "stages") {
      given.stages = value.cast<vector<string>>();
    } else {
      throw py::type_error("Net() got an unexpected keyword argument '" + key +
                           "'; it takes network_file, phase, weights, level, stages");
    }
  }
  return given;
}

/// caffe.TRAIN or caffe.TEST, checked.
Phase PhaseArg(const py::object& phase) {
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
  return static_cast<Phase>(phase_value);
}

/// Net(...), as BVLC's pycaffe takes it; planned for LMS when caffe.set_lms asks for it.
shared_ptr<PyNet> MakeNet(const py::args& args, const py::kwargs& kwargs) {
  NetArgs given = ReadNetArgs(args, kwargs);
  if (!given.file) throw py::type_error("Net() needs the network file (a .prototxt)");
  const Phase phase = PhaseArg(given.phase);
  const string file_path = PathArg(given.file);
  const string weights_path = given.weights.is_none() ? "" : PathArg(given.weights);
  py::gil_scoped_release release;
  auto net = std::make_shared<PyNet>(file_path, phase, given.level, &given.stages);
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

/// Checks a layer index from Python (libcaffe CHECKs them: a bad one would abort the process).
int LayerIndex(const PyNet& net, int index, const char* what) {
  const int size = static_cast<int>(net.layers().size());
  if (index < 0 || index >= size) {
    throw py::index_error(string(what) + " layer index " + std::to_string(index) +
                          " out of range: the net has " + std::to_string(size) + " layers");
  }
  return index;
}

/// Forward and backward over a range of layers, reshape, and the inputs of a MemoryData net.
void BindPasses(PyNetClass& net_class) {
  net_class
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
      .def("_set_input_arrays", &SetInputArrays, py::arg("data").noconvert(),
           py::arg("labels").noconvert());
}

/// The learned weights: copied from files or another net, saved to files.
void BindWeights(PyNetClass& net_class) {
  net_class
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
          py::arg("filename"));
}

/// What the net is made of: its name, phase, blobs, layers, inputs and outputs.
void BindStructure(PyNetClass& net_class) {
  net_class.def_property_readonly("name", &PyNet::name)
      .def_property_readonly("_phase",
                             [](const PyNet& net) { return static_cast<int>(net.phase()); })
      .def_property_readonly("_blobs", [](const PyNet& net) { return net.blobs(); })
      .def_property_readonly("_blob_names", &PyNet::blob_names)
      .def_property_readonly("_layer_names", &PyNet::layer_names)
      .def_property_readonly("layers", &NetLayers)
      .def_property_readonly("_inputs", &PyNet::input_blob_indices)
      .def_property_readonly("_outputs", &PyNet::output_blob_indices)
      .def_property_readonly("_blob_loss_weights", &PyNet::blob_loss_weights)
      .def(
          "_top_ids",
          [](const PyNet& net, int index) {
            return net.top_ids(LayerIndex(net, index, "top_ids"));
          },
          py::arg("layer_index"))
      .def(
          "_bottom_ids",
          [](const PyNet& net, int index) {
            return net.bottom_ids(LayerIndex(net, index, "bottom_ids"));
          },
          py::arg("layer_index"));
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

/// BVLC's train.py, for layer_wise_reduce: the NCCL object reduces each layer's gradients as
/// backward produces them. The net only points to it: it must be its solver's net, and the
/// solver (add_callback) and this net object keep it alive.
void AddNcclAfterBackward(py::object self, const shared_ptr<NcclSolverSync<float>>& nccl) {
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
}

void BindCallbacks(PyNetClass& net_class) {
  net_class
      .def("before_forward", &AddNetCallback<&PyNet::add_before_forward>, py::arg("run"),
           "run(layer_index) before each layer's forward")
      .def("after_forward", &AddNetCallback<&PyNet::add_after_forward>, py::arg("run"),
           "run(layer_index) after each layer's forward")
      .def("before_backward", &AddNetCallback<&PyNet::add_before_backward>, py::arg("run"),
           "run(layer_index) before each layer's backward")
      .def("after_backward", &AddNcclAfterBackward, py::arg("nccl"))
      .def("after_backward", &AddNetCallback<&PyNet::add_after_backward>, py::arg("run"),
           "run(layer_index) after each layer's backward");
}

}  // namespace

void BindNet(py::module_& m) {
  PyNetClass net_class(m, "Net", py::dynamic_attr(),
                       "Net(network_file, phase, level=0, stages=(), "
                       "weights=None), or Net(network_file, weights, phase)");
  net_class.def(py::init(&MakeNet));
  BindStructure(net_class);
  BindPasses(net_class);
  BindWeights(net_class);
  BindCallbacks(net_class);
}

}  // namespace pycaffe
}  // namespace caffe
