// One program's use of Large Model Support (docs/LMS.md) on the GPU its calling thread runs:
// `caffe train|test|time` with -lms/-lms_frac/-gpu_mem_limit, and pycaffe's caffe.set_lms. It
// installs that GPU's memory manager on the thread, builds each net's plan, and reports the
// settings and, at the end, the counters.
#ifndef CAFFE_LMS_SESSION_HPP_
#define CAFFE_LMS_SESSION_HPP_

#include <memory>
#include <string>

#include "caffe/lms/memory_manager.hpp"
#include "caffe/lms/planner.hpp"
#include "caffe/memory/device.hpp"
#include "caffe/net.hpp"

namespace caffe {
namespace lms {

class Session {
 public:
  /// `gpu` < 0 is a CPU run, where the options have no effect: one warning says so when any was
  /// given. Otherwise, when LMS or a budget is asked for, installs the manager of GPU `gpu` on
  /// the calling thread and logs the "[LMS] threshold ..." line. Throws a caffe::Error naming
  /// the GPU when it cannot be used.
  Session(const Options& options, int gpu);
  /// The same on `device` (tests use a FakeDevice): installs its manager when LMS or a budget
  /// is asked for.
  Session(const Options& options, std::unique_ptr<Device> device);
  /// Logs the "[LMS] swapped in ..." counters and uninstalls the manager; buffers that have
  /// device copies keep the manager alive until they are freed.
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// Whether a manager is installed (a GPU run with LMS or a budget).
  bool installed() const { return manager_ != nullptr; }
  /// Whether nets get plans (-lms given on a GPU run; a budget alone plans nothing).
  bool planning() const { return manager_ != nullptr && manager_->lms_enabled(); }

  /// `net`'s plan when planning() (else null), logged in one line. With `attach`, the net's
  /// Forward/Backward run it, and the planner must outlive the net's runs.
  std::shared_ptr<Planner<float>> Plan(Net<float>* net, bool attach) const;

  /// The counters line ("[LMS] swapped in ..."), or "" when nothing is installed.
  std::string StatsLine() const;

 private:
  void Install(const Options& options, std::unique_ptr<Device> device);

  std::shared_ptr<MemoryManager> manager_;
};

}  // namespace lms
}  // namespace caffe

#endif  // CAFFE_LMS_SESSION_HPP_
