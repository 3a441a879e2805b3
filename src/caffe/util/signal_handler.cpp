#include "caffe/util/signal_handler.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "caffe/common.hpp"

namespace caffe {

namespace {

std::atomic<bool> got_sigint{false};
std::atomic<bool> got_sighup{false};
std::atomic<bool> got_sigterm{false};
std::atomic<bool> sigterm_seen{false};  // not consumed by the solver's polling
bool already_hooked_up = false;
bool hooked_sigterm = false;
struct sigaction previous_sigint;
struct sigaction previous_sighup;
struct sigaction previous_sigterm;
// The line SIGTERM prints, written by the handler (so no allocation there).
char sigterm_message[256];
size_t sigterm_message_length = 0;

const char* ActionName(SolverAction::Enum action) {
  return action == SolverAction::STOP       ? "stop"
         : action == SolverAction::SNAPSHOT ? "snapshot"
                                            : "none";
}

void HandleSignal(int signal) {
  if (signal == SIGTERM) {
    sigterm_seen = true;
    // Whoever reads our output may be going away (mpirun stops forwarding it once it ends the
    // job): a full pipe must not block the snapshot, so from now on a write that would wait
    // fails instead (a lost log line).
    const int flags = fcntl(STDERR_FILENO, F_GETFL);
    if (flags >= 0) fcntl(STDERR_FILENO, F_SETFL, flags | O_NONBLOCK);
    if (!got_sigterm.exchange(true)) {
      ssize_t ignored = write(STDERR_FILENO, sigterm_message, sigterm_message_length);
      (void)ignored;
    }
  } else if (signal == SIGHUP) {
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

void HookupHandler(bool sigterm) {
  CHECK(!already_hooked_up) << "Tried to hookup signal handlers more than once.";
  already_hooked_up = true;
  hooked_sigterm = sigterm;
  struct sigaction action = {};
  action.sa_handler = &HandleSignal;
  action.sa_flags = SA_RESTART;
  sigfillset(&action.sa_mask);
  PCHECK(sigaction(SIGHUP, &action, &previous_sighup) == 0) << "Cannot install SIGHUP handler.";
  PCHECK(sigaction(SIGINT, &action, &previous_sigint) == 0) << "Cannot install SIGINT handler.";
  if (sigterm) {
    PCHECK(sigaction(SIGTERM, &action, &previous_sigterm) == 0)
        << "Cannot install SIGTERM handler.";
  }
}

void UnhookHandler() {
  if (!already_hooked_up) return;
  sigaction(SIGHUP, &previous_sighup, nullptr);
  sigaction(SIGINT, &previous_sigint, nullptr);
  if (hooked_sigterm) sigaction(SIGTERM, &previous_sigterm, nullptr);
  already_hooked_up = false;
  hooked_sigterm = false;
}

}  // namespace

SolverAction::Enum ParseSolverAction(const std::string& value, const std::string& flag_name) {
  if (value == "stop") return SolverAction::STOP;
  if (value == "snapshot") return SolverAction::SNAPSHOT;
  if (value == "none") return SolverAction::NONE;
  CAFFE_THROW() << "invalid value '" << value << "' for -" << flag_name
                << "; expected stop, snapshot or none";
}

SignalHandler::SignalHandler(SolverAction::Enum sigint_action, SolverAction::Enum sighup_action,
                             std::optional<SolverAction::Enum> sigterm_action)
    : sigint_action_(sigint_action),
      sighup_action_(sighup_action),
      sigterm_action_(sigterm_action.value_or(SolverAction::NONE)) {
  got_sigint = false;
  got_sighup = false;
  got_sigterm = false;
  set_sigterm_message(std::string("caffe: got SIGTERM (-sigterm_effect ") +
                      ActionName(sigterm_action_) + ")");
  HookupHandler(sigterm_action.has_value());
}

void SignalHandler::set_sigterm_message(const std::string& line) {
  // Written while no SIGTERM can be handled halfway: the handler reads it only once per run.
  const std::string text = line.substr(0, sizeof(sigterm_message) - 2) + "\n";
  std::memcpy(sigterm_message, text.data(), text.size());
  sigterm_message_length = text.size();
}

SignalHandler::~SignalHandler() { UnhookHandler(); }

SolverAction::Enum SignalHandler::CheckForSignals() const {
  // A SIGTERM is the strongest request: the scheduler's SIGKILL follows it.
  if (got_sigterm.exchange(false) && sigterm_action_ != SolverAction::NONE) return sigterm_action_;
  if (got_sighup.exchange(false)) return sighup_action_;
  if (got_sigint.exchange(false)) return sigint_action_;
  return SolverAction::NONE;
}

bool SignalHandler::GotSigterm() { return sigterm_seen; }

ActionCallback SignalHandler::GetActionFunction() {
  return [this] { return CheckForSignals(); };
}

}  // namespace caffe
