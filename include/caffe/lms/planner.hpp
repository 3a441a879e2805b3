// Large Model Support's net-level planner (docs/LMS.md), built once after the net is set up. One
// iteration is a sequence of steps: every layer's forward (first to last), then every layer's
// backward (last to first). For each step it asks the layer which buffers it reads and writes
// (Layer::DeclareMemoryUse); before a step it makes them resident and issues swap-ins for the next
// steps (the prefetch depth), after a step it releases the buffers whose last use in that pass it
// was. A layer that cannot declare its buffers runs on demand (one warning per type).
#ifndef CAFFE_LMS_PLANNER_HPP_
#define CAFFE_LMS_PLANNER_HPP_

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "caffe/lms/memory_manager.hpp"
#include "caffe/memory/memory_use.hpp"
#include "caffe/net.hpp"

namespace caffe {
namespace lms {

template <typename Dtype>
class Planner {
 public:
  /// One layer's forward or backward and what it uses.
  struct Step {
    Pass pass = Pass::kForward;
    int layer = 0;
    std::string label;    // "layer 'conv1' (Convolution) forward"
    bool planned = true;  // false: the layer did not declare its buffers (on demand)
    std::vector<MemoryUse> uses;
    std::vector<SyncedMemory*> release_after;  // buffers whose last use in the pass this is
    std::vector<SyncedMemory*> discard_after;  // the same for scratch: no copy home
  };

  /// Builds the plan of `net` (which must outlive the planner's use) for `manager`.
  Planner(Net<Dtype>* net, std::shared_ptr<MemoryManager> manager);

  /// (Re)builds the plan from the layers' current declarations.
  void Build();
  const std::vector<Step>& steps() const { return steps_; }
  int forward_step(int layer) const { return layer; }
  int backward_step(int layer) const { return 2 * num_layers() - 1 - layer; }
  int num_layers() const { return static_cast<int>(net_->layers().size()); }

  /// Around one step: makes its buffers resident and prefetches the next steps' buffers; then
  /// releases the buffers whose last use it was.
  void BeforeStep(int step);
  void AfterStep(int step);
  /// Runs BeforeStep/AfterStep from the net's forward and backward callbacks. The planner must
  /// then live as long as the net runs.
  void AttachToNet();

  /// The buffers, in order, that BeforeStep(step) asks the manager to prefetch: those the next
  /// -lms_prefetch steps use, except the ones they overwrite whole.
  std::vector<SyncedMemory*> PrefetchCandidates(int step) const;
  /// One debug line per step: its label and each buffer with its access and size.
  std::string Describe(int step) const;
  /// "[LMS] plan: ..." (buffers and bytes declared, how many LMS-managed, layers on demand).
  std::string SummaryLine() const;
  /// Layer types that did not declare their buffers.
  const std::set<std::string>& on_demand_types() const { return on_demand_types_; }

 private:
  class Hook;
  // Whether the layer still declares exactly what the plan holds for `step`.
  bool PlanIsCurrent(int step) const;
  // Rebuilds the plan if any of steps first..last (those that exist) is not current: a plan
  // naming a freed buffer must not be followed.
  void ReplanIfStale(int first, int last);
  bool Declare(int step_index, MemoryUses* uses) const;

  Net<Dtype>* net_;
  std::shared_ptr<MemoryManager> manager_;
  std::vector<Step> steps_;
  std::set<std::string> on_demand_types_;
  std::set<std::string> warned_types_;
  std::vector<std::unique_ptr<typename Net<Dtype>::Callback>> hooks_;
};

}  // namespace lms
}  // namespace caffe

#endif  // CAFFE_LMS_PLANNER_HPP_
