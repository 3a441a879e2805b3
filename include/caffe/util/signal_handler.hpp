// SIGINT / SIGHUP / SIGTERM handling for training: the signal only sets a flag; the solver polls it
// between iterations (and test batches) and stops, snapshots, or ignores it as -sigint_effect,
// -sighup_effect and -sigterm_effect say. A second Ctrl-C while a stop is pending ends the process
// at once; a second SIGTERM does not (a learner under mpirun in a Slurm job gets one from each),
// since the scheduler's SIGKILL ends the grace period anyway. SIGTERM is what schedulers
// (Slurm, LSF, Kubernetes, systemd) and mpirun send to end or preempt a job: its handler also
// prints one line at once, so a log shows why the run ended even if SIGKILL follows.
#ifndef CAFFE_UTIL_SIGNAL_HANDLER_HPP_
#define CAFFE_UTIL_SIGNAL_HANDLER_HPP_

#include <functional>
#include <optional>
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
  /// Without `sigterm_action`, SIGTERM keeps its disposition (it ends the process).
  SignalHandler(SolverAction::Enum sigint_action, SolverAction::Enum sighup_action,
                std::optional<SolverAction::Enum> sigterm_action = std::nullopt);
  ~SignalHandler();
  /// The line printed (to stderr, from the signal handler) when SIGTERM arrives; at most 255
  /// characters are kept. By default "caffe: got SIGTERM (-sigterm_effect ...)".
  void set_sigterm_message(const std::string& line);
  /// The function the solver calls to learn what, if anything, was requested.
  ActionCallback GetActionFunction();
  /// Whether SIGTERM arrived while a handler was installed: the process is being ended (by a
  /// scheduler, or by mpirun, which then no longer answers MPI_Finalize).
  static bool GotSigterm();

 private:
  SolverAction::Enum CheckForSignals() const;
  SolverAction::Enum sigint_action_;
  SolverAction::Enum sighup_action_;
  SolverAction::Enum sigterm_action_ = SolverAction::NONE;
};

}  // namespace caffe

#endif  // CAFFE_UTIL_SIGNAL_HANDLER_HPP_
