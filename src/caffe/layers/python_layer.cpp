// Python.h first, as CPython requires.
#include "caffe/layers/python_layer.hpp"

#include <Python.h>

#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

namespace caffe {

namespace {

/// Holds the GIL for its scope, from any thread, whether or not this thread held it already.
class GilLock {
 public:
  GilLock() : state_(PyGILState_Ensure()) {}
  ~GilLock() { PyGILState_Release(state_); }

 private:
  PyGILState_STATE state_;
  DISABLE_COPY_AND_ASSIGN(GilLock);
};

/// An owned reference (null when a call failed; the Python error is then pending).
class PyRef {
 public:
  explicit PyRef(PyObject* object = nullptr) : object_(object) {}
  ~PyRef() { Py_XDECREF(object_); }
  PyObject* get() const { return object_; }
  PyObject* release() {
    PyObject* object = object_;
    object_ = nullptr;
    return object;
  }
  explicit operator bool() const { return object_ != nullptr; }

 private:
  PyObject* object_;
  DISABLE_COPY_AND_ASSIGN(PyRef);
};

bool InterpreterFinalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

/// Starts an interpreter where the process has none (the caffe tool, C++ programs), without
/// Python's signal handlers (the tool handles SIGINT/SIGHUP itself), then releases the GIL so that
/// any thread can take it. Under pycaffe the interpreter runs already and nothing happens.
void EnsureInterpreter() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (Py_IsInitialized()) return;
    Py_InitializeEx(0);
    PyEval_SaveThread();
  });
}

/// The pending Python exception as its formatted traceback ("Traceback (most recent call
/// last): ... ValueError: boom"), and clears it.
string TakePythonError() {
  PyObject *type = nullptr, *value = nullptr, *trace = nullptr;
  PyErr_Fetch(&type, &value, &trace);
  if (type == nullptr) return "(no Python exception was set)";
  PyErr_NormalizeException(&type, &value, &trace);
  PyRef type_ref(type), value_ref(value), trace_ref(trace);
  if (value != nullptr && trace != nullptr) PyException_SetTraceback(value, trace);
  string text;
  PyRef traceback(PyImport_ImportModule("traceback"));
  if (traceback) {
    PyRef lines(PyObject_CallMethod(traceback.get(), "format_exception", "OOO", type,
                                    value ? value : Py_None, trace ? trace : Py_None));
    PyRef empty(PyUnicode_FromString(""));
    PyRef joined(lines && empty ? PyUnicode_Join(empty.get(), lines.get()) : nullptr);
    const char* utf8 = joined ? PyUnicode_AsUTF8(joined.get()) : nullptr;
    if (utf8 != nullptr) text = utf8;
  }
  if (text.empty()) {  // the traceback module failed: at least the exception itself
    PyRef description(PyObject_Str(value ? value : type));
    const char* utf8 = description ? PyUnicode_AsUTF8(description.get()) : nullptr;
    text = utf8 != nullptr ? utf8 : "(unprintable Python exception)";
  }
  PyErr_Clear();
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

/// ": " and the pending Python exception where it is one line (an import that found no module),
/// else ":" and its traceback from the next line on.
string ColonAndPythonError() {
  const string text = TakePythonError();
  return (text.find('\n') == string::npos ? ": " : ":\n") + text;
}

/// A Python list of caffe.Blob viewing `blobs` (through caffe._caffe._wrap_blobs).
template <typename Dtype>
PyRef WrapBlobs(const Blobs<Dtype>& blobs) {
  PyRef module(PyImport_ImportModule("caffe._caffe"));
  if (!module) return PyRef();
  PyRef capsule(PyCapsule_New(const_cast<Blobs<Dtype>*>(&blobs), kPythonBlobsCapsuleName, nullptr));
  if (!capsule) return PyRef();
  return PyRef(PyObject_CallMethod(module.get(), "_wrap_blobs", "O", capsule.get()));
}

}  // namespace

template <typename Dtype>
PythonLayer<Dtype>::~PythonLayer() {
  // At interpreter exit the object goes with the interpreter.
  if (self_ == nullptr || !Py_IsInitialized() || InterpreterFinalizing()) return;
  GilLock gil;
  PyRef unbound(PyObject_CallMethod(self_, "_bind", "O", Py_None));
  if (!unbound) PyErr_Clear();
  Py_DECREF(self_);
}

template <typename Dtype>
string PythonLayer<Dtype>::class_name() const {
  return this->layer_param_.python_param().module() + "." +
         this->layer_param_.python_param().layer();
}

template <typename Dtype>
void PythonLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  LAYER_CHECK((std::is_same<Dtype, float>::value))
      << "Python layers run in float nets only (pycaffe's blobs are float32)";
  const PythonParameter& param = this->layer_param_.python_param();
  LAYER_CHECK(!param.module().empty())
      << "python_param.module is empty; name the Python module that defines the layer";
  LAYER_CHECK(!param.layer().empty())
      << "python_param.layer is empty; name the class (a subclass of caffe.Layer) in module '"
      << param.module() << "'";
  LAYER_CHECK(self_ == nullptr) << "set up twice";
  EnsureInterpreter();
  GilLock gil;
  // `caffe` registers the Blob and Layer types the methods receive.
  PyRef caffe_module(PyImport_ImportModule("caffe"));
  if (!caffe_module) {
    LAYER_THROW() << "cannot import the caffe Python package, which Python layers need (put "
                     "the build's python/ folder on PYTHONPATH)"
                  << ColonAndPythonError();
  }
  PyRef module(PyImport_ImportModule(param.module().c_str()));
  if (!module) {
    LAYER_THROW() << "cannot import python_param.module '" << param.module()
                  << "' (is its folder on PYTHONPATH?)" << ColonAndPythonError();
  }
  PyRef layer_class(PyObject_GetAttrString(module.get(), param.layer().c_str()));
  if (!layer_class) {
    PyErr_Clear();
    LAYER_THROW() << "Python module '" << param.module() << "' has no class '" << param.layer()
                  << "' (python_param.layer)";
  }
  PyRef base(PyObject_GetAttrString(caffe_module.get(), "Layer"));
  const int derived = base && PyType_Check(layer_class.get())
                          ? PyObject_IsSubclass(layer_class.get(), base.get())
                          : 0;
  if (derived != 1) {
    PyErr_Clear();
    LAYER_THROW() << class_name() << " is not a subclass of caffe.Layer";
  }
  // BVLC hands the layer its LayerParameter; here as a caffe_pb2.LayerParameter.
  string serialized;
  this->layer_param_.SerializeToString(&serialized);
  PyRef pb2(PyImport_ImportModule("caffe.proto.caffe_pb2"));
  PyRef message_class(pb2 ? PyObject_GetAttrString(pb2.get(), "LayerParameter") : nullptr);
  PyRef bytes(PyBytes_FromStringAndSize(serialized.data(), serialized.size()));
  PyRef layer_param(message_class && bytes
                        ? PyObject_CallMethod(message_class.get(), "FromString", "O", bytes.get())
                        : nullptr);
  if (!layer_param) {
    LAYER_THROW() << "cannot convert the LayerParameter for Python" << ColonAndPythonError();
  }
  PyRef self(PyObject_CallFunctionObjArgs(layer_class.get(), layer_param.get(), nullptr));
  if (!self) {
    LAYER_THROW() << "constructing " << class_name() << " failed" << ColonAndPythonError();
  }
  PyRef capsule(PyCapsule_New(static_cast<Layer<Dtype>*>(this), kPythonLayerCapsuleName, nullptr));
  PyRef bound(capsule ? PyObject_CallMethod(self.get(), "_bind", "O", capsule.get()) : nullptr);
  PyRef param_str(PyUnicode_FromStringAndSize(param.param_str().data(), param.param_str().size()));
  PyRef phase(PyObject_GetAttrString(caffe_module.get(), this->phase_ == TRAIN ? "TRAIN" : "TEST"));
  if (!bound || !param_str || !phase ||
      PyObject_SetAttrString(self.get(), "param_str", param_str.get()) != 0 ||
      PyObject_SetAttrString(self.get(), "phase", phase.get()) != 0) {
    LAYER_THROW() << "cannot prepare " << class_name() << ColonAndPythonError();
  }
  self_ = self.release();
  PyRef bottom_list(WrapBlobs(bottom)), top_list(WrapBlobs(top));
  if (!bottom_list || !top_list) {
    LAYER_THROW() << "cannot wrap the blobs for Python" << ColonAndPythonError();
  }
  CallMethod("setup", {bottom_list.get(), top_list.get()});
}

template <typename Dtype>
void PythonLayer<Dtype>::CallMethod(const char* method, const vector<_object*>& args) {
  GilLock gil;
  PyRef function(PyObject_GetAttrString(self_, method));
  PyRef arguments(function ? PyTuple_New(static_cast<Py_ssize_t>(args.size())) : nullptr);
  for (size_t i = 0; arguments && i < args.size(); ++i) {
    Py_INCREF(args[i]);
    PyTuple_SET_ITEM(arguments.get(), static_cast<Py_ssize_t>(i), args[i]);
  }
  PyRef result(arguments ? PyObject_Call(function.get(), arguments.get(), nullptr) : nullptr);
  if (!result) {
    LAYER_THROW() << class_name() << "." << method << "() raised an exception"
                  << ColonAndPythonError();
  }
}

template <typename Dtype>
void PythonLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  GilLock gil;
  PyRef bottom_list(WrapBlobs(bottom)), top_list(WrapBlobs(top));
  if (!bottom_list || !top_list) {
    LAYER_THROW() << "cannot wrap the blobs for Python" << ColonAndPythonError();
  }
  CallMethod("reshape", {bottom_list.get(), top_list.get()});
}

template <typename Dtype>
void PythonLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  GilLock gil;
  PyRef bottom_list(WrapBlobs(bottom)), top_list(WrapBlobs(top));
  if (!bottom_list || !top_list) {
    LAYER_THROW() << "cannot wrap the blobs for Python" << ColonAndPythonError();
  }
  CallMethod("forward", {bottom_list.get(), top_list.get()});
}

template <typename Dtype>
void PythonLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                      const Blobs<Dtype>& bottom) {
  GilLock gil;
  PyRef top_list(WrapBlobs(top)), bottom_list(WrapBlobs(bottom));
  PyRef propagate(PyList_New(static_cast<Py_ssize_t>(propagate_down.size())));
  for (size_t i = 0; propagate && i < propagate_down.size(); ++i) {
    PyObject* flag = propagate_down[i] ? Py_True : Py_False;
    Py_INCREF(flag);
    PyList_SET_ITEM(propagate.get(), static_cast<Py_ssize_t>(i), flag);
  }
  if (!top_list || !bottom_list || !propagate) {
    LAYER_THROW() << "cannot wrap the blobs for Python" << ColonAndPythonError();
  }
  CallMethod("backward", {top_list.get(), propagate.get(), bottom_list.get()});
}

INSTANTIATE_CLASS(PythonLayer);
REGISTER_LAYER_CLASS(Python);

}  // namespace caffe
