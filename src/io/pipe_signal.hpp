// A write to a server that went away raises SIGPIPE, whose default action
// ends the process. The I/O thread blocks it for good, and connections write
// with send(MSG_NOSIGNAL). Only when libuv must write the rest of a write
// (its write(2)) on a user thread running the loop (a task run in place,
// EventLoop::lead_until) is SIGPIPE blocked on that thread, for the rest of
// its blocking call: write(2) then just reports EPIPE.
#pragma once

namespace warden::detail {

class PipeSignalShield {
 public:
  // Blocks SIGPIPE on this thread (once until lift).
  void raise_shield();
  // Takes back a SIGPIPE raised on this thread while shielded (pending now,
  // not when shielded), so it neither ends the process nor stays pending
  // for the thread's own code to meet, then unblocks SIGPIPE unless the
  // thread had blocked it itself. Only SIGPIPE is touched: the rest of the
  // mask is the thread's.
  void lift();
  bool raised() const { return shielded_; }

 private:
  bool shielded_ = false;
  bool was_blocked_ = false;
  bool was_pending_ = false;
};

}  // namespace warden::detail
