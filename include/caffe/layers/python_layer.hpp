// Python: a layer written in Python (BVLC's `type: "Python"` with python_param { module, layer,
// param_str }). Built into libcaffe only with pycaffe (CAFFE_PYTHON); the caffe tool and C++
// programs start an interpreter on first use, pycaffe's process already has one.
//
// At LayerSetUp the layer imports `caffe` and python_param.module (from sys.path, i.e. PYTHONPATH),
// constructs python_param.layer (a subclass of caffe.Layer) with the LayerParameter as a
// caffe_pb2.LayerParameter, sets its `param_str` and `phase` attributes, and calls its
// setup(bottom, top); Reshape, Forward and Backward call its reshape(bottom, top),
// forward(bottom, top) and backward(top, propagate_down, bottom), where bottom and top are lists
// of caffe.Blob whose .data / .diff are numpy views onto this net's blobs. `self.blobs` is the
// layer's learned blobs (self.blobs.add_blob(*shape) adds one; the net then trains and saves it).
//
// Every call takes the GIL (PyGILState) for its duration, so any thread may run the net, and
// pycaffe releases the GIL while a net runs. A Python exception becomes a caffe::Error that starts
// with "Python layer '<name>': ", names the module, class and method, and carries the traceback.
#ifndef CAFFE_LAYERS_PYTHON_LAYER_HPP_
#define CAFFE_LAYERS_PYTHON_LAYER_HPP_

#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"
#include "caffe/proto/caffe.pb.h"

// CPython's object type (PyObject), declared here so this header needs no Python.h.
struct _object;

namespace caffe {

// How this layer and pycaffe's _caffe module (python/caffe/_caffe.cpp) hand C++ objects to each
// other: PyCapsules with these names. caffe.Layer._bind(capsule) binds a Python layer object to
// its Layer<float> (None unbinds); caffe._caffe._wrap_blobs(capsule) turns a Blobs<float> into a
// list of caffe.Blob.
constexpr char kPythonLayerCapsuleName[] = "caffe.Layer<float>";
constexpr char kPythonBlobsCapsuleName[] = "caffe.Blobs<float>";

/// Any number of bottoms and tops, as the Python class decides. Float nets only: pycaffe's blobs
/// are float32 (a double net gets a caffe::Error at setup).
template <typename Dtype>
class PythonLayer final : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  /// Unbinds the Python object from this layer (its .blobs then raise) and drops the reference.
  ~PythonLayer() override;
  const char* type() const override { return "Python"; }
  /// The user's code decides what in place means, as in BVLC.
  bool AllowsInPlace(int, int) const override { return true; }
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;

  /// The Python object implementing the layer (borrowed; null before setup). pycaffe's
  /// net.layers returns it for this layer.
  _object* python_object() const { return self_; }

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;

 private:
  /// Calls self.<method>(args...) holding the GIL; a Python exception becomes a caffe::Error.
  void CallMethod(const char* method, const vector<_object*>& args);
  /// "module.Class", for messages.
  string class_name() const;

  _object* self_ = nullptr;  // owned reference to the instance of python_param.layer
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_PYTHON_LAYER_HPP_
