// caffe.ddl's compiled half (_caffe._ddl; python/caffe/ddl.py is the public face): this process as
// one learner of a DDL job under mpirun (docs/DDL.md). init() makes the DdlSession that `caffe
// train -ddl` makes and joins this thread to the job as that tool does (solver count and rank,
// the learner's GPU); bcast, bcast_net and allreduce are the session's collectives on numpy
// arrays and a net's parameters; attach() puts a DdlSync on a Python solver, the tool's own code
// path, so that a Python training loop averages gradients exactly as `caffe train -ddl` does.
// Every collective releases the GIL. In a build without MPI every call says so.
#include <memory>
#include <string>

#include "bindings.hpp"
#include "caffe/parallel/ddl_options.hpp"
#ifdef USE_MPI
#include "caffe/parallel/ddl_session.hpp"
#include "caffe/parallel/ddl_sync.hpp"
#endif

namespace caffe {
namespace pycaffe {
namespace {

// The -gpu value init(gpu=...) stands for: None/False: a CPU learner (-1); True: 0, "my first
// granted GPU"; an int: that one.
int RequestedGpu(const py::object& gpu) {
  if (gpu.is_none()) return -1;
  if (py::isinstance<py::bool_>(gpu)) return gpu.cast<bool>() ? 0 : -1;
  if (!py::isinstance<py::int_>(gpu) || gpu.cast<long long>() < 0) {
    throw py::value_error("caffe.ddl.init(gpu=" + py::repr(gpu).cast<string>() +
                          "): expected None or False (a CPU learner), True or a GPU id >= 0 "
                          "(this learner's N-th granted GPU, as `caffe train -gpu N -ddl`)");
  }
  return gpu.cast<int>();
}

#ifdef USE_MPI

/// The learner this process is: none before init, the session after, none again after finalize.
struct Learner {
  shared_ptr<DdlSession> session;
  bool finalized = false;
  int device = -1;
};

Learner& ThisLearner() {
  static Learner learner;
  return learner;
}

DdlSession& Session(const char* call) {
  const Learner& learner = ThisLearner();
  if (learner.session == nullptr) {
    throw Error(string("caffe.ddl.") + call + "(): " +
                (learner.finalized
                     ? "DDL has ended in this process (finalize(), or an init() that "
                       "failed); a process joins one job, once"
                     : "DDL is not initialized; call caffe.ddl.init() first, under mpirun"));
  }
  return *learner.session;
}

/// A solver trained by the learners together: the tool's DdlSync, and what it needs alive.
/// Members end in reverse order: the sync first, while its solver and session still exist.
struct AttachedSolver {
  shared_ptr<DdlSession> session;
  shared_ptr<PySolver> solver;
  std::unique_ptr<DdlSync<float>> sync;
};

// The one rule for arrays: numpy, float32 or float64, C-contiguous (and writeable where they
// are written in place). Returns whether the array holds doubles.
bool CheckArray(const char* call, const py::object& object, bool in_place) {
  const string where = string("caffe.ddl.") + call + ": ";
  if (!py::isinstance<py::array>(object)) {
    throw py::value_error(where + "expected a numpy array of float32 or float64, not " +
                          py::str(py::type::of(object).attr("__name__")).cast<string>());
  }
  const py::array array = py::reinterpret_borrow<py::array>(object);
  const bool is_float = py::isinstance<py::array_t<float>>(object);
  const bool is_double = py::isinstance<py::array_t<double>>(object);
  if (!is_float && !is_double) {
    throw py::value_error(where + "arrays of float32 or float64 only, not " +
                          py::str(array.dtype()).cast<string>() + " (convert with astype)");
  }
  if (!(array.flags() & py::array::c_style)) {
    throw py::value_error(where +
                          "the array is not C-contiguous (a view with strides); pass "
                          "numpy.ascontiguousarray(a)" +
                          (in_place ? " and use the array returned" : ""));
  }
  if (in_place && !array.writeable()) {
    throw py::value_error(where + "the array is read-only; it is written in place");
  }
  return is_double;
}

// Collective: every learner passed an array of the same size and type, or every learner raises
// ValueError naming what differs.
void CheckSameArrays(DdlSession& session, const char* call, size_t count, bool is_double) {
  std::vector<int64_t> shapes;
  {
    py::gil_scoped_release release;
    shapes = session.Allgather(static_cast<int64_t>(count) * 2 + (is_double ? 1 : 0));
  }
  for (size_t rank = 1; rank < shapes.size(); ++rank) {
    if (shapes[rank] == shapes[0]) continue;
    auto described = [&](size_t learner) {
      return "learner " + std::to_string(learner) + " has " + std::to_string(shapes[learner] / 2) +
             (shapes[learner] % 2 ? " float64" : " float32") + " values";
    };
    throw py::value_error(string("caffe.ddl.") + call + ": the learners' arrays differ (" +
                          described(0) + ", " + described(rank) +
                          "); every learner must pass one of the same size and dtype");
  }
}

py::tuple Init(const string& mode, const py::object& gpu, bool bvlc) {
  // No options: the defaults, one ring over every learner (`caffe train -ddl` needs some).
  DdlOptions options =
      mode.find_first_not_of(" \t") == string::npos ? DdlOptions() : ParseDdlOptions(mode);
  options.bvlc = bvlc;
  const int requested = RequestedGpu(gpu);
  Learner& learner = ThisLearner();
  if (learner.session != nullptr) {
    throw Error("caffe.ddl.init(): DDL is initialized already (learner " +
                std::to_string(learner.session->rank()) + " of " +
                std::to_string(learner.session->size()) + "); call it once per process");
  }
  if (learner.finalized) Session("init");  // says why not again
  // Before MPI starts, so that the mistake is one line on every learner.
  if (requested >= 0 && !Caffe::GpuAvailable()) {
#ifdef CPU_ONLY
    const char* why = "this build of Caffe has no GPU support (built with CPU_ONLY)";
#else
    const char* why = "no usable GPU is visible to this process";
#endif
    CAFFE_THROW() << "caffe.ddl.init(gpu=" << py::repr(gpu).cast<string>() << "): " << why
                  << "; leave gpu out for a CPU learner";
  }
  {
    py::gil_scoped_release release;
    try {
      learner.session = std::make_shared<DdlSession>(options);
    } catch (const Error&) {
      // A -mode that does not fit the job ends MPI on every learner: it cannot start again.
      learner.finalized = !DdlSession::MpiRunning();
      throw;
    }
    DdlSession& session = *learner.session;
    session.JoinAsSolver();
    // A failure from here on leaves the session up: the other learners may be waiting on this
    // one, and ddl.py ends the job (MPI_Abort) when the exception is not caught.
    if (requested >= 0) {
      learner.device = session.ChooseGpu(requested);
      const int device = learner.device;
      Caffe::set_mode(Caffe::GPU);
      Caffe::SetDevice(device);
      session.Run([device] { Caffe::SetDevice(device); });  // the communication thread too
    } else {
      Caffe::set_mode(Caffe::CPU);
    }
  }
  return py::make_tuple(learner.session->rank(), learner.session->size(), learner.device);
}

void Finalize() {
  Learner& learner = ThisLearner();
  if (learner.session == nullptr) return;
  {
    py::gil_scoped_release release;
    learner.session->Finish();
  }
  learner.session.reset();
  learner.finalized = true;
  Caffe::set_solver_count(1);
  Caffe::set_solver_rank(0);
  Caffe::set_multiprocess(false);
}

py::object Bcast(const py::object& array, int root) {
  DdlSession& session = Session("bcast");
  if (root < 0 || root >= session.size()) {
    throw py::value_error("caffe.ddl.bcast(root=" + std::to_string(root) +
                          "): the learners are 0 to " + std::to_string(session.size() - 1));
  }
  const bool is_double = CheckArray("bcast", array, /*in_place=*/true);
  py::array values = py::reinterpret_borrow<py::array>(array);
  const size_t count = values.size();
  CheckSameArrays(session, "bcast", count, is_double);
  void* data = values.mutable_data();
  py::gil_scoped_release release;
  if (is_double) {
    session.Broadcast(static_cast<double*>(data), count, root);
  } else {
    session.Broadcast(static_cast<float*>(data), count, root);
  }
  return array;
}

void BcastNet(PyNet& net, int root) {
  DdlSession& session = Session("bcast_net");
  if (root < 0 || root >= session.size()) {
    throw py::value_error("caffe.ddl.bcast_net(root=" + std::to_string(root) +
                          "): the learners are 0 to " + std::to_string(session.size() - 1));
  }
  size_t count = 0;
  for (const PyBlob* param : net.learnable_params()) count += param->count();
  CheckSameArrays(session, "bcast_net", count, /*is_double=*/false);
  py::gil_scoped_release release;
  BroadcastParams(&net, &session, root);
}

py::array Allreduce(const py::object& array, const string& op) {
  DdlSession& session = Session("allreduce");
  if (op != "sum" && op != "avg") {
    throw py::value_error("caffe.ddl.allreduce(op='" + op + "'): expected 'avg' or 'sum'");
  }
  const bool is_double = CheckArray("allreduce", array, /*in_place=*/false);
  // The result is a new array; the argument is left as it was.
  py::array result = py::array::ensure(array).attr("copy")();
  const size_t count = result.size();
  CheckSameArrays(session, "allreduce", count, is_double);
  void* data = result.mutable_data();
  const bool average = op == "avg";
  const int learners = session.size();
  {
    py::gil_scoped_release release;
    if (is_double) {
      double* values = static_cast<double*>(data);
      session.Allreduce(values, count);
      if (average) {
        for (size_t i = 0; i < count; ++i) values[i] /= learners;
      }
    } else {
      float* values = static_cast<float*>(data);
      session.Allreduce(values, count);
      if (average) {
        for (size_t i = 0; i < count; ++i) values[i] /= learners;
      }
    }
  }
  return result;
}

shared_ptr<AttachedSolver> Attach(py::object solver_object) {
  DdlSession& session = Session("attach");
  if (py::hasattr(solver_object, "_ddl")) {
    throw py::value_error("caffe.ddl.attach(solver): this solver is attached already");
  }
  if (!py::isinstance<PySolver>(solver_object)) {
    throw py::value_error(
        "caffe.ddl.attach: expected a caffe solver (caffe.SGDSolver, "
        "caffe.get_solver(...)), not " +
        py::str(py::type::of(solver_object).attr("__name__")).cast<string>());
  }
  auto attached = std::make_shared<AttachedSolver>();
  attached->session = ThisLearner().session;
  attached->solver = solver_object.cast<shared_ptr<PySolver>>();
  {
    py::gil_scoped_release release;
    attached->sync = std::make_unique<DdlSync<float>>(attached->solver.get(), &session);
  }
  // The solver calls the sync back and its gradients live in the sync's buffer: the Python
  // solver keeps it alive (and the sync the C++ solver).
  py::object kept = py::cast(attached);
  solver_object.attr("_ddl") = kept;
  KeepWith(solver_object, kept);
  return attached;
}

#else  // USE_MPI

[[noreturn]] void NoMpi(const char* call) {
  CAFFE_THROW() << "caffe.ddl." << call << "(): this build of Caffe has no MPI support (Open MPI "
                << "was not found when it was configured, or CAFFE_MPI=OFF); install "
                << "libopenmpi-dev and openmpi-bin (scripts/install_deps.sh), rebuild, and run "
                << "under mpirun";
}

#endif  // USE_MPI

}  // namespace

void BindDdl(py::module_& m) {
  py::module_ ddl = m.def_submodule("_ddl", "caffe.ddl's compiled half; use caffe.ddl");
#ifdef USE_MPI
  py::class_<AttachedSolver, shared_ptr<AttachedSolver>>(
      ddl, "Sync",
      "What caffe.ddl.attach(solver) returns: the solver's gradients are averaged over the "
      "learners before each update, as `caffe train -ddl` does.")
      .def(
          "solve",
          [](AttachedSolver& attached, const py::object& resume_file) {
            const string path = resume_file.is_none() ? "" : PathArg(resume_file);
            py::gil_scoped_release release;
            attached.sync->Solve(path.empty() ? nullptr : path.c_str());
          },
          py::arg("resume_file") = py::none(),
          "Trains to max_iter on every learner: rank 0 tests and snapshots, the others step")
      .def_property_readonly(
          "gradient_count",
          [](const AttachedSolver& attached) { return attached.sync->gradient_count(); })
      .def_property_readonly(
          "buckets", [](const AttachedSolver& attached) { return attached.sync->buckets().size(); })
      .def_property_readonly("allreduce", [](const AttachedSolver& attached) {
        return attached.sync->communicator().name();
      });
  ddl.def("init", &Init, py::arg("mode") = "", py::arg("gpu") = py::none(), py::arg("bvlc") = false,
          "Joins the job mpirun started, as `caffe train -ddl MODE [-gpu N] [-bvlc]`; returns "
          "(rank, size, device), device -1 for a CPU learner");
  ddl.def("finalize", &Finalize, "Ends this learner's part in the job (every learner calls it)");
  ddl.def(
      "is_initialized", [] { return ThisLearner().session != nullptr; },
      "Whether init() has joined a job that finalize() has not ended");
  ddl.def("rank", [] { return Session("rank").rank(); });
  ddl.def("size", [] { return Session("size").size(); });
  ddl.def(
      "local_rank", [] { return Session("local_rank").local_rank(); },
      "This learner's index among the learners on its host");
  ddl.def("bcast", &Bcast, py::arg("array"), py::arg("root") = 0,
          "In place: every learner's array (float32/float64, C-contiguous) becomes root's; "
          "returns it");
  ddl.def("bcast_net", &BcastNet, py::arg("net"), py::arg("root") = 0,
          "Every learner's net gets root's learnable parameters");
  ddl.def("allreduce", &Allreduce, py::arg("array"), py::arg("op") = "avg",
          "A new array: the element-wise 'sum' or 'avg' over the learners, by the allreduce "
          "-mode asks for");
  ddl.def("attach", &Attach, py::arg("solver"),
          "Averages the solver's gradients over the learners before each update, as `caffe "
          "train -ddl` does (its DdlSync); returns a Sync");
  // An uncaught exception on one learner: the others may wait on it forever (ddl.py).
  ddl.def("_abort_job", [](int code) {
    if (DdlSession::MpiRunning()) DdlSession::AbortJob(code);
  });
#else
  ddl.def(
      "init",
      [](const string& mode, const py::object& gpu, bool) {
        // A bad string is named first, as `caffe train -ddl` does.
        if (mode.find_first_not_of(" \t") != string::npos) ParseDdlOptions(mode);
        RequestedGpu(gpu);
        NoMpi("init");
      },
      py::arg("mode") = "", py::arg("gpu") = py::none(), py::arg("bvlc") = false);
  ddl.def("finalize", [] {});
  ddl.def("is_initialized", [] { return false; });
  for (const char* name :
       {"rank", "size", "local_rank", "bcast", "bcast_net", "allreduce", "attach"}) {
    ddl.def(name, [name](const py::args&, const py::kwargs&) { NoMpi(name); });
  }
  ddl.def("_abort_job", [](int) {});
#endif
}

}  // namespace pycaffe
}  // namespace caffe
