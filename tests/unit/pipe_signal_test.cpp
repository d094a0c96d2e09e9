// The SIGPIPE shield a user thread raises while libuv may write(2) for it.
// A SIGPIPE sent to this thread stands for one raised by such a write.
#include <gtest/gtest.h>

#include <pthread.h>
#include <signal.h>

#include <thread>

#include "io/pipe_signal.hpp"

namespace warden::detail {
namespace {

sigset_t set_of(int signal) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signal);
  return set;
}

// In this thread's mask / pending for this thread or the process.
bool blocked(int signal = SIGPIPE) {
  sigset_t mask;
  sigemptyset(&mask);
  pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  return sigismember(&mask, signal) == 1;
}
bool pending(int signal = SIGPIPE) {
  sigset_t set;
  sigemptyset(&set);
  sigpending(&set);
  return sigismember(&set, signal) == 1;
}

// Each case runs on a thread of its own: the masks it changes die with it.
template <class Body>
void on_a_fresh_thread(Body body) {
  std::thread thread(body);
  thread.join();
}

TEST(PipeSignalShield, ASignalRaisedWhileShieldedIsTakenBackAndTheThreadUnblocked) {
  on_a_fresh_thread([] {
    ASSERT_FALSE(blocked());
    PipeSignalShield shield;
    shield.raise_shield();
    EXPECT_TRUE(blocked());
    pthread_kill(pthread_self(), SIGPIPE);  // would end the process if delivered
    EXPECT_TRUE(pending());
    shield.lift();
    EXPECT_FALSE(pending());
    EXPECT_FALSE(blocked());
  });
}

TEST(PipeSignalShield, RaisingTwiceNeedsOneLift) {
  on_a_fresh_thread([] {
    PipeSignalShield shield;
    shield.raise_shield();
    shield.raise_shield();
    pthread_kill(pthread_self(), SIGPIPE);
    shield.lift();
    EXPECT_FALSE(pending());
    EXPECT_FALSE(blocked());
    EXPECT_FALSE(shield.raised());
  });
}

TEST(PipeSignalShield, AThreadThatBlockedTheSignalItselfKeepsItBlocked) {
  on_a_fresh_thread([] {
    sigset_t pipe = set_of(SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    PipeSignalShield shield;
    shield.raise_shield();
    pthread_kill(pthread_self(), SIGPIPE);
    shield.lift();
    EXPECT_TRUE(blocked());
    // Raised by the shielded write, so taken back: the thread's own code
    // would otherwise meet it as soon as it unblocks the signal.
    EXPECT_FALSE(pending());
  });
}

TEST(PipeSignalShield, ASignalPendingBeforeTheShieldIsLeftToTheThread) {
  on_a_fresh_thread([] {
    sigset_t pipe = set_of(SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    pthread_kill(pthread_self(), SIGPIPE);
    PipeSignalShield shield;
    shield.raise_shield();
    shield.lift();
    EXPECT_TRUE(pending()) << "the thread's own SIGPIPE was taken";
    EXPECT_TRUE(blocked());
    timespec none{0, 0};
    sigtimedwait(&pipe, nullptr, &none);
  });
}

TEST(PipeSignalShield, TheRestOfTheMaskIsTheThreads) {
  on_a_fresh_thread([] {
    PipeSignalShield shield;
    shield.raise_shield();
    sigset_t usr = set_of(SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr, nullptr);  // a callback's own change while shielded
    shield.lift();
    EXPECT_TRUE(blocked(SIGUSR1));
    EXPECT_FALSE(blocked());
  });
}

}  // namespace
}  // namespace warden::detail
