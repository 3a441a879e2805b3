#include "caffe/util/signal_handler.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>

#include "caffe/common.hpp"

namespace caffe {

namespace {

std::atomic<bool> got_sigint{false};
std::atomic<bool> got_sighup{false};
bool already_hooked_up = false;
struct sigaction previous_sigint;
struct sigaction previous_sighup;

void HandleSignal(int signal) {
  if (signal == SIGHUP) {
    got_sighup = true;
  } else if (signal == SIGINT) {
    if (got_sigint) {
      // A second Ctrl-C while the first is still pending: the user wants out now.
      const char message[] = "\nSecond interrupt: exiting without waiting for the solver.\n";
      ssize_t ignored = write(STDERR_FILENO, message, sizeof(message) - 1);
      (void)ignored;
      _exit(130);
    }
    got_sigint = true;
  }
}

void HookupHandler() {
  CHECK(!already_hooked_up) << "Tried to hookup signal handlers more than once.";
  already_hooked_up = true;
  struct sigaction action = {};
  action.sa_handler = &HandleSignal;
  action.sa_flags = SA_RESTART;
  sigfillset(&action.sa_mask);
  PCHECK(sigaction(SIGHUP, &action, &previous_sighup) == 0) << "Cannot install SIGHUP handler.";
  PCHECK(sigaction(SIGINT, &action, &previous_sigint) == 0) << "Cannot install SIGINT handler.";
}

void UnhookHandler() {
  if (!already_hooked_up) return;
  sigaction(SIGHUP, &previous_sighup, nullptr);
  sigaction(SIGINT, &previous_sigint, nullptr);
  already_hooked_up = false;
}

}  // namespace

SolverAction::Enum ParseSolverAction(const std::string& value, const std::string& flag_name) {
  if (value == "stop") return SolverAction::STOP;
  if (value == "snapshot") return SolverAction::SNAPSHOT;
  if (value == "none") return SolverAction::NONE;
  CAFFE_THROW() << "invalid value '" << value << "' for -" << flag_name
                << "; expected stop, snapshot or none";
}

SignalHandler::SignalHandler(SolverAction::Enum sigint_action, SolverAction::Enum sighup_action)
    : sigint_action_(sigint_action), sighup_action_(sighup_action) {
  got_sigint = false;
  got_sighup = false;
  HookupHandler();
}

SignalHandler::~SignalHandler() { UnhookHandler(); }

SolverAction::Enum SignalHandler::CheckForSignals() const {
  if (got_sighup.exchange(false)) return sighup_action_;
  if (got_sigint.exchange(false)) return sigint_action_;
  return SolverAction::NONE;
}

ActionCallback SignalHandler::GetActionFunction() {
  return [this] { return CheckForSignals(); };
}

}  // namespace caffe
