// _caffe: the compiled core of pycaffe. It wraps libcaffe's float Blob (its data and diff as
// numpy arrays that are views onto the blob's memory), Layer, Net and the solvers, the per-thread
// context (mode, device, random seed, solver count/rank) and caffe::Error (raised as caffe.Error,
// a RuntimeError). pycaffe.py builds BVLC's Python-level API (net.blobs, net.forward(**inputs),
// forward_all, ...) on top. Calls that run a net or a solver release the GIL; the Python layer
// type (src/caffe/layers/python_layer.cpp) takes it back for each call into Python.
//
// This file sets up the module; each bind_*.cpp binds one part (bindings.hpp lists them).
#include "bindings.hpp"
#include "caffe/log_prefix.hpp"
#include "caffe/util/blas_core.hpp"

#ifndef CAFFE_VERSION_STRING
#define CAFFE_VERSION_STRING "1.0.0"
#endif

PYBIND11_MODULE(_caffe, m) {
  using namespace caffe;           // NOLINT(build/namespaces)
  using namespace caffe::pycaffe;  // NOLINT(build/namespaces)
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

  BindContext(m);
  BindDistributedSupport(m);
  BindLibrary(m);
  BindLms(m);
  BindImage(m);
  // Classes in this order: a signature names the classes bound before it by their Python names
  // (caffe.Blob), any other by its C++ name.
  BindBlob(m);
  BindLayer(m);
  BindNet(m);
  BindSolver(m);
  BindNccl(m);
  BindSgdSolvers(m);
  BindDdl(m);
}
