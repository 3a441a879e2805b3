#include "caffe/lms/planner.hpp"

#include <map>
#include <set>
#include <sstream>

namespace caffe {
namespace lms {

template <typename Dtype>
class Planner<Dtype>::Hook : public Net<Dtype>::Callback {
 public:
  Hook(Planner* planner, Pass pass, bool before)
      : planner_(planner), pass_(pass), before_(before) {}
  void run(int layer) override {
    const int step =
        pass_ == Pass::kForward ? planner_->forward_step(layer) : planner_->backward_step(layer);
    if (before_) {
      planner_->BeforeStep(step);
    } else {
      planner_->AfterStep(step);
    }
  }

 private:
  Planner* planner_;
  Pass pass_;
  bool before_;
};

template <typename Dtype>
Planner<Dtype>::Planner(Net<Dtype>* net, std::shared_ptr<MemoryManager> manager)
    : net_(net), manager_(std::move(manager)) {
  Build();
}

template <typename Dtype>
bool Planner<Dtype>::Declare(int step_index, MemoryUses* uses) const {
  const Step& step = steps_[step_index];
  const int i = step.layer;
  if (step.pass == Pass::kBackward && !net_->layer_need_backward()[i]) return true;  // no work
  // A fused group (Net::RunsFused) works in its head's forward step and its last layer's
  // backward step, and its head declares for the group.
  const int head = net_->FusedHead(i);
  const int last = head + net_->fused_followers()[head];
  const Layer<Dtype>& layer = *net_->layers()[head];
  const Blobs<Dtype>& bottom = net_->bottom_vecs()[head];
  const Blobs<Dtype>& top = net_->top_vecs()[head];
  const std::vector<bool>& propagate_down = net_->bottom_need_backward()[head];
  if (head == last) return layer.DeclareMemoryUse(step.pass, bottom, top, propagate_down, uses);
  if (i != (step.pass == Pass::kForward ? head : last)) return true;  // the group's other steps
  return layer.fusion()->DeclareMemoryUseFused(step.pass, bottom, top, propagate_down,
                                               net_->FollowersPropagateDown(head), uses);
}

template <typename Dtype>
void Planner<Dtype>::Build() {
  const int layers = num_layers();
  steps_.assign(2 * layers, Step());
  on_demand_types_.clear();
  for (int s = 0; s < 2 * layers; ++s) {
    Step& step = steps_[s];
    step.pass = s < layers ? Pass::kForward : Pass::kBackward;
    step.layer = s < layers ? s : 2 * layers - 1 - s;
    const Layer<Dtype>& layer = *net_->layers()[step.layer];
    step.label = "layer '" + layer.layer_param().name() + "' (" + layer.type() + ") " +
                 (step.pass == Pass::kForward ? "forward" : "backward");
    const int head = net_->FusedHead(step.layer);
    for (int j = head; j <= head + net_->fused_followers()[head]; ++j) {
      if (j != step.layer) step.label += " with '" + net_->layer_names()[j] + "'";
    }
    MemoryUses uses;
    step.planned = Declare(s, &uses);
    if (step.planned) {
      step.uses = uses.uses();
    } else {
      on_demand_types_.insert(layer.type());
      if (warned_types_.insert(layer.type()).second) {
        LOG(WARNING) << "[LMS] layer type " << layer.type() << " (layer '"
                     << layer.layer_param().name()
                     << "') does not declare its buffers; they are swapped on demand";
      }
    }
  }
  // Last use of each buffer within each pass.
  for (int pass = 0; pass < 2; ++pass) {
    std::map<SyncedMemory*, std::pair<int, unsigned>> last_use;  // step and access
    for (int s = pass * layers; s < (pass + 1) * layers; ++s) {
      for (const MemoryUse& use : steps_[s].uses) last_use[use.memory] = {s, use.access};
    }
    for (const auto& [memory, use] : last_use) {
      Step& step = steps_[use.first];
      (use.second == kScratch ? step.discard_after : step.release_after).push_back(memory);
    }
  }
  for (int s = 0; s < 2 * layers; ++s) VLOG(1) << Describe(s);
}

template <typename Dtype>
bool Planner<Dtype>::PlanIsCurrent(int step) const {
  if (!steps_[step].planned) return true;
  MemoryUses uses;
  Declare(step, &uses);
  const std::vector<MemoryUse>& planned = steps_[step].uses;
  if (uses.uses().size() != planned.size()) return false;
  for (size_t i = 0; i < planned.size(); ++i) {
    if (uses.uses()[i].memory != planned[i].memory || uses.uses()[i].access != planned[i].access) {
      return false;
    }
  }
  return true;
}

template <typename Dtype>
std::vector<SyncedMemory*> Planner<Dtype>::PrefetchCandidates(int step) const {
  std::vector<SyncedMemory*> candidates;
  const int depth = manager_->options().prefetch_depth;
  // An overwritten buffer's old values are not needed, by its step or by later ones in the window
  // (an in-place layer after the one writing its bottom): it gets memory when its step comes.
  std::set<const SyncedMemory*> overwritten;
  for (int ahead = 1; ahead <= depth && step + ahead < static_cast<int>(steps_.size()); ++ahead) {
    for (const MemoryUse& use : steps_[step + ahead].uses) {
      if (Overwrites(use.access)) {
        overwritten.insert(use.memory);
      } else if (overwritten.count(use.memory) == 0) {
        candidates.push_back(use.memory);
      }
    }
  }
  return candidates;
}

template <typename Dtype>
void Planner<Dtype>::ReplanIfStale(int first, int last) {
  for (int step = first; step <= last && step < static_cast<int>(steps_.size()); ++step) {
    if (!PlanIsCurrent(step)) {
      VLOG(1) << "[LMS] " << steps_[step].label << " declares other buffers now; replanning";
      Build();
      return;
    }
  }
}

template <typename Dtype>
void Planner<Dtype>::BeforeStep(int step) {
  // Blobs grow (a larger input reshapes the net, a layer shapes a buffer on first use): then the
  // buffers are new, the old ones freed, and the plan of this step and those it prefetches for
  // must not name them.
  ReplanIfStale(step, step + manager_->options().prefetch_depth);
  const Step& current = steps_[step];
  manager_->BeginStep(current.label, current.planned);
  for (const MemoryUse& use : current.uses) {
    manager_->PinResident(use.memory, Overwrites(use.access));
  }
  for (SyncedMemory* memory : PrefetchCandidates(step)) manager_->Prefetch(memory);
}

template <typename Dtype>
void Planner<Dtype>::AfterStep(int step) {
  ReplanIfStale(step, step);  // the layer may have reshaped a buffer of its own as it ran
  const Step& current = steps_[step];
  for (const MemoryUse& use : current.uses) manager_->Unpin(use.memory);
  manager_->EndStep();
  for (SyncedMemory* memory : current.release_after) manager_->Release(memory);
  for (SyncedMemory* memory : current.discard_after) manager_->Release(memory, /*discard=*/true);
}

template <typename Dtype>
void Planner<Dtype>::AttachToNet() {
  hooks_.emplace_back(new Hook(this, Pass::kForward, true));
  net_->add_before_forward(hooks_.back().get());
  hooks_.emplace_back(new Hook(this, Pass::kForward, false));
  net_->add_after_forward(hooks_.back().get());
  hooks_.emplace_back(new Hook(this, Pass::kBackward, true));
  net_->add_before_backward(hooks_.back().get());
  hooks_.emplace_back(new Hook(this, Pass::kBackward, false));
  net_->add_after_backward(hooks_.back().get());
}

template <typename Dtype>
std::string Planner<Dtype>::Describe(int step) const {
  const Step& current = steps_[step];
  std::ostringstream line;
  line << "[LMS] step " << step << ": " << current.label;
  if (!current.planned) return line.str() + ": on demand";
  for (const MemoryUse& use : current.uses) {
    line << " "
         << (use.access == kReadWrite   ? "rw"
             : use.access == kScratch   ? "s"
             : use.access == kOverwrite ? "o"
             : use.access == kWrite     ? "w"
                                        : "r")
         << ":" << use.memory << "(" << use.memory->size() << ")";
  }
  if (!current.release_after.empty() || !current.discard_after.empty()) {
    line << "; then release " << current.release_after.size() + current.discard_after.size();
  }
  return line.str();
}

template <typename Dtype>
std::string Planner<Dtype>::SummaryLine() const {
  std::set<SyncedMemory*> buffers;
  for (const Step& step : steps_) {
    for (const MemoryUse& use : step.uses) buffers.insert(use.memory);
  }
  size_t bytes = 0, managed = 0, managed_bytes = 0;
  for (SyncedMemory* memory : buffers) {
    bytes += memory->size();
    if (manager_->Manages(memory->size())) {
      ++managed;
      managed_bytes += memory->size();
    }
  }
  std::ostringstream line;
  line << "[LMS] plan of net '" << net_->name() << "': " << steps_.size() << " steps, "
       << buffers.size() << " buffers (" << bytes << " bytes) declared, " << managed
       << " LMS-managed (" << managed_bytes << " bytes)";
  if (!on_demand_types_.empty()) {
    line << "; on demand:";
    for (const std::string& type : on_demand_types_) line << " " << type;
  }
  return line.str();
}

INSTANTIATE_CLASS(Planner);

}  // namespace lms
}  // namespace caffe
