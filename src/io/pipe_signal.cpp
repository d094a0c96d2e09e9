#include "io/pipe_signal.hpp"

#include <pthread.h>
#include <signal.h>

#include <ctime>

namespace warden::detail {

namespace {

sigset_t only_pipe() {
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  return pipe;
}

// Pending for this thread or the process: sigpending(2) does not tell them
// apart, hence comparing with what was pending when the shield went up.
bool pipe_pending() {
  sigset_t pending;
  sigemptyset(&pending);
  return sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
}

}  // namespace

void PipeSignalShield::raise_shield() {
  if (shielded_) return;
  sigset_t pipe = only_pipe();
  sigset_t before;
  sigemptyset(&before);
  pthread_sigmask(SIG_BLOCK, &pipe, &before);
  was_blocked_ = sigismember(&before, SIGPIPE) == 1;
  was_pending_ = pipe_pending();
  shielded_ = true;
}

void PipeSignalShield::lift() {
  if (!shielded_) return;
  shielded_ = false;
  sigset_t pipe = only_pipe();
  if (!was_pending_ && pipe_pending()) {
    timespec none{0, 0};
    sigtimedwait(&pipe, nullptr, &none);
  }
  if (!was_blocked_) pthread_sigmask(SIG_UNBLOCK, &pipe, nullptr);
}

}  // namespace warden::detail
