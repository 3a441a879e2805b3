// SIGINT / SIGHUP handling for training: the signal only sets a flag; the solver polls it between
// iterations (and test batches) and stops, snapshots, or ignores it as -sigint_effect and
// -sighup_effect say. A second Ctrl-C while a stop is pending ends the process at once.
#ifndef CAFFE_UTIL_SIGNAL_HANDLER_HPP_
#define CAFFE_UTIL_SIGNAL_HANDLER_HPP_

#include <functional>
#include <string>

namespace caffe {

namespace SolverAction {
enum Enum { NONE = 0, STOP = 1, SNAPSHOT = 2 };
}  // namespace SolverAction

using ActionCallback = std::function<SolverAction::Enum()>;

/// Parses "stop", "snapshot" or "none"; throws caffe::Error naming `flag_name` otherwise.
SolverAction::Enum ParseSolverAction(const std::string& value, const std::string& flag_name);

/// Installs the handlers for its lifetime and restores the previous ones afterwards.
class SignalHandler {
 public:
  SignalHandler(SolverAction::Enum sigint_action, SolverAction::Enum sighup_action);
  ~SignalHandler();
  /// The function the solver calls to learn what, if anything, was requested.
  ActionCallback GetActionFunction();

 private:
  SolverAction::Enum CheckForSignals() const;
  SolverAction::Enum sigint_action_;
  SolverAction::Enum sighup_action_;
};

}  // namespace caffe

#endif  // CAFFE_UTIL_SIGNAL_HANDLER_HPP_
