// caffe.set_lms and caffe.lms_stats: Large Model Support (docs/LMS.md) for the nets and solvers
// made from Python, with the flags of `caffe train`; PlanNet plans each net made after set_lms.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "caffe/lms/lms_options.hpp"
#include "caffe/lms/session.hpp"
#include "caffe/util/environment.hpp"

namespace caffe {
namespace pycaffe {
namespace {

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
      lms::MakeOptions(threshold_kb, frac, prefetch, limit, GpuMemLimitFromEnvironment());
  PyLms& state = LmsState();
  state.session.reset();  // the nets planned so far keep their plans and manager
  const int gpu = Caffe::mode() == Caffe::GPU ? Caffe::device() : -1;
  state.session = std::make_unique<lms::Session>(options, gpu);
  return state.session->installed();
}

}  // namespace

// Callers make nets with the GIL released; the plans are shared by every Python thread, so the
// GIL guards them.
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

void BindLms(py::module_& m) {
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
}

}  // namespace pycaffe
}  // namespace caffe
