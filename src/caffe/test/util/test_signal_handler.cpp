// SIGINT/SIGHUP/SIGTERM handling: parsing the -sigint_effect/-sighup_effect values, a signal raised
// in this process turning into the configured action exactly once, SIGTERM before SIGHUP before
// SIGINT (and SIGTERM left alone without its action), the previous handlers restored afterwards,
// and a second Ctrl-C ending the process (in a child).
#include <signal.h>

#include <atomic>
#include <cstdlib>
#include <string>

#include "caffe/test/test_caffe_main.hpp"
#include "caffe/util/signal_handler.hpp"

namespace caffe {

namespace {

std::atomic<int> custom_handler_calls{0};
void CustomHandler(int) { ++custom_handler_calls; }

}  // namespace

TEST(SignalHandlerTest, ParsesTheThreeActions) {
  EXPECT_EQ(ParseSolverAction("stop", "sigint_effect"), SolverAction::STOP);
  EXPECT_EQ(ParseSolverAction("snapshot", "sighup_effect"), SolverAction::SNAPSHOT);
  EXPECT_EQ(ParseSolverAction("none", "sighup_effect"), SolverAction::NONE);
}

TEST(SignalHandlerTest, UnknownActionNamesTheFlagAndTheValue) {
  for (const char* bad : {"Stop", "", "exit"}) {
    try {
      ParseSolverAction(bad, "sigint_effect");
      FAIL() << "expected caffe::Error for '" << bad << "'";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(std::string("'") + bad + "'"), std::string::npos) << message;
      EXPECT_NE(message.find("-sigint_effect"), std::string::npos) << message;
      EXPECT_NE(message.find("stop, snapshot or none"), std::string::npos) << message;
    }
  }
}

TEST(SignalHandlerTest, NothingRequestedWithoutASignal) {
  SignalHandler handler(SolverAction::STOP, SolverAction::SNAPSHOT);
  ActionCallback action = handler.GetActionFunction();
  EXPECT_EQ(action(), SolverAction::NONE);
}

TEST(SignalHandlerTest, SighupGivesItsActionOnce) {
  SignalHandler handler(SolverAction::STOP, SolverAction::SNAPSHOT);
  ActionCallback action = handler.GetActionFunction();
  ASSERT_EQ(raise(SIGHUP), 0);
  EXPECT_EQ(action(), SolverAction::SNAPSHOT);
  EXPECT_EQ(action(), SolverAction::NONE);  // consumed
  // Another SIGHUP later is another request.
  ASSERT_EQ(raise(SIGHUP), 0);
  EXPECT_EQ(action(), SolverAction::SNAPSHOT);
}

TEST(SignalHandlerTest, SigintGivesItsAction) {
  // One SIGINT per handler: a second one while the first is pending ends the process.
  SignalHandler handler(SolverAction::SNAPSHOT, SolverAction::NONE);
  ActionCallback action = handler.GetActionFunction();
  ASSERT_EQ(raise(SIGINT), 0);
  EXPECT_EQ(action(), SolverAction::SNAPSHOT);
  EXPECT_EQ(action(), SolverAction::NONE);
}

TEST(SignalHandlerTest, SigtermGivesItsActionFirstAndIsRemembered) {
  SignalHandler handler(SolverAction::SNAPSHOT, SolverAction::SNAPSHOT, SolverAction::STOP);
  handler.set_sigterm_message("test: got SIGTERM");
  ActionCallback action = handler.GetActionFunction();
  ASSERT_EQ(raise(SIGHUP), 0);
  ASSERT_EQ(raise(SIGTERM), 0);
  ASSERT_EQ(raise(SIGTERM), 0);  // a second one (mpirun and the scheduler) changes nothing
  EXPECT_EQ(action(), SolverAction::STOP);
  EXPECT_EQ(action(), SolverAction::SNAPSHOT);
  EXPECT_EQ(action(), SolverAction::NONE);
  EXPECT_TRUE(SignalHandler::GotSigterm());
}

TEST(SignalHandlerDeathTest, WithoutASigtermActionSigtermEndsTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        SignalHandler handler(SolverAction::STOP, SolverAction::NONE);
        raise(SIGTERM);
        std::exit(0);
      },
      ::testing::KilledBySignal(SIGTERM), "");
}

TEST(SignalHandlerTest, SighupIsReportedBeforeSigint) {
  SignalHandler handler(SolverAction::STOP, SolverAction::SNAPSHOT);
  ActionCallback action = handler.GetActionFunction();
  ASSERT_EQ(raise(SIGINT), 0);
  ASSERT_EQ(raise(SIGHUP), 0);
  EXPECT_EQ(action(), SolverAction::SNAPSHOT);
  EXPECT_EQ(action(), SolverAction::STOP);
  EXPECT_EQ(action(), SolverAction::NONE);
}

TEST(SignalHandlerTest, IgnoredSignalRequestsNothing) {
  SignalHandler handler(SolverAction::STOP, SolverAction::NONE);
  ActionCallback action = handler.GetActionFunction();
  ASSERT_EQ(raise(SIGHUP), 0);  // -sighup_effect none: the process survives, nothing happens
  EXPECT_EQ(action(), SolverAction::NONE);
}

TEST(SignalHandlerTest, PreviousHandlersComeBackAfterwards) {
  struct sigaction custom = {}, saved_hup = {}, saved_int = {};
  custom.sa_handler = &CustomHandler;
  sigemptyset(&custom.sa_mask);
  ASSERT_EQ(sigaction(SIGHUP, &custom, &saved_hup), 0);
  ASSERT_EQ(sigaction(SIGINT, &custom, &saved_int), 0);
  custom_handler_calls = 0;
  {
    SignalHandler handler(SolverAction::STOP, SolverAction::SNAPSHOT);
    ASSERT_EQ(raise(SIGHUP), 0);
    EXPECT_EQ(custom_handler_calls, 0);  // caught by the solver's handler instead
    EXPECT_EQ(handler.GetActionFunction()(), SolverAction::SNAPSHOT);
  }
  ASSERT_EQ(raise(SIGHUP), 0);
  ASSERT_EQ(raise(SIGINT), 0);
  EXPECT_EQ(custom_handler_calls, 2);
  sigaction(SIGHUP, &saved_hup, nullptr);
  sigaction(SIGINT, &saved_int, nullptr);
}

TEST(SignalHandlerTest, SignalsBeforeANewHandlerDoNotCarryOver) {
  {
    SignalHandler first(SolverAction::STOP, SolverAction::SNAPSHOT);
    ASSERT_EQ(raise(SIGHUP), 0);  // never polled
  }
  SignalHandler second(SolverAction::STOP, SolverAction::SNAPSHOT);
  EXPECT_EQ(second.GetActionFunction()(), SolverAction::NONE);
}

TEST(SignalHandlerDeathTest, SecondSigintWhileTheFirstIsPendingExits) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        SignalHandler handler(SolverAction::STOP, SolverAction::NONE);
        raise(SIGINT);
        raise(SIGINT);
        // Not reached: the second interrupt ends the process with 130 (128 + SIGINT).
        std::exit(0);
      },
      ::testing::ExitedWithCode(130), "Second interrupt");
}

}  // namespace caffe
