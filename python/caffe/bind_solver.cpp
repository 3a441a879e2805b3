// caffe.Solver and its subclasses (SGDSolver, NesterovSolver, AdaGradSolver, RMSPropSolver,
// AdaDeltaSolver, AdamSolver) and caffe.get_solver: made from a solver .prototxt (their nets
// planned for LMS when caffe.set_lms asks for it), stepped, snapshotted and restored, and called
// back from Python before each iteration and each update. Calls that train release the GIL.
#include <memory>
#include <string>

#include "bindings.hpp"
#include "caffe/io/upgrade_proto.hpp"
#include "caffe/parallel/nccl_solver_sync.hpp"
#include "caffe/sgd_solvers.hpp"
#include "caffe/solver_factory.hpp"

namespace caffe {
namespace pycaffe {
namespace {

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

using PySolverClass = py::class_<PySolver, shared_ptr<PySolver>>;

/// What the solver is: its nets, iteration, type, loss and parameters.
void BindState(PySolverClass& solver_class) {
  solver_class.def_property_readonly("net", &PySolver::net)
      .def_property_readonly("test_nets", [](PySolver& solver) { return solver.test_nets(); })
      .def_property_readonly("iter", &PySolver::iter)
      .def_property_readonly("max_iter",
                             [](const PySolver& solver) { return solver.param().max_iter(); })
      .def_property_readonly("type", [](const PySolver& solver) { return solver.type(); })
      .def_property_readonly("smoothed_loss", &PySolver::smoothed_loss)
      .def_property_readonly("_param_bytes", [](const PySolver& solver) {
        string serialized;
        solver.param().SerializeToString(&serialized);
        return py::bytes(serialized);
      });
}

/// Training: solve, step, restore, snapshot, apply_update, share_weights.
void BindTraining(PySolverClass& solver_class) {
  solver_class
      .def(
          "solve",
          [](PySolver& solver, const py::object& resume_file) {
            const string path = resume_file.is_none() ? "" : PathArg(resume_file);
            py::gil_scoped_release release;
            if (Caffe::root_solver()) {
              solver.Solve(path.empty() ? nullptr : path.c_str());
              return;
            }
            // One of several solvers (caffe.ddl, NCCL): the root alone tests and snapshots.
            if (!path.empty()) solver.Restore(path.c_str());
            solver.Step(solver.param().max_iter() - solver.iter());
          },
          py::arg("resume_file") = py::none(),
          "solve(resume_file=None): trains to max_iter (restoring the .solverstate first); "
          "a solver of rank > 0 (set_solver_rank, caffe.ddl) steps only, the root tests and "
          "snapshots")
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
          "as net.share_with(solver.net))");
}

/// solver.add_callback: Python functions, or the NCCL object of BVLC's train.py.
void BindCallbacks(PySolverClass& solver_class) {
  solver_class
      .def(
          "add_callback",
          [](py::object self, py::object on_start, py::object on_gradients_ready) {
            auto callback = std::make_unique<PythonSolverCallback>(on_start, on_gradients_ready);
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
              throw py::value_error("solver.add_callback(nccl): nccl was made for another solver");
            }
            self.cast<PySolver&>().add_callback(nccl.get());
            py::object kept = py::cast(nccl);
            kept.attr("_added_to_solver") = true;
            KeepWith(self, kept);
          },
          py::arg("callback"),
          "add_callback(nccl): the NCCL object reduces the gradients before each update");
}

}  // namespace

void BindSolver(py::module_& m) {
  PySolverClass solver_class(m, "Solver", py::dynamic_attr());
  BindState(solver_class);
  BindTraining(solver_class);
  BindCallbacks(solver_class);
}

void BindSgdSolvers(py::module_& m) {
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

}  // namespace pycaffe
}  // namespace caffe
