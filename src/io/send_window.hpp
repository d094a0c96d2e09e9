// Back-pressure on one connection: how many commands may be written and not
// yet answered, and whether a queued command may still be written at all. A
// pure machine (see docs/pure-machines.md); the connection feeds it the
// command at the head of its queue and every answer, and performs what it
// says.
//
// Why: a burst far beyond what the server answers within a command's deadline
// must not be written whole. Written, every command of it is an unknown
// outcome once its deadline passes (an acquire must then be settled at the
// server, which doubles the overload); queued, the ones that cannot be
// answered in time fail before they are written, certainly without effect,
// and the server works at its full rate on the ones that can.
#pragma once

#include <chrono>
#include <cstddef>
#include <variant>

#include "io/action_list.hpp"
#include "io/event_loop.hpp"

namespace warden::detail {

class SendWindow {
 public:
  // At most `limit` commands written and unanswered (0: no limit).
  explicit SendWindow(std::size_t limit) : limit_(limit) {}

  // ---- events ----
  // The command at the head of the queue could be written now (a command
  // made with nothing queued and room in the window is written without
  // asking). `in_flight`:
  // commands written on the link and not answered yet (those whose deadline
  // passed included: the server still has them to run).
  struct offered {
    clock::time_point now;
    clock::time_point deadline;
    std::size_t in_flight = 0;
  };
  // A written command was answered. `begun`: when the server could begin on
  // it — its write, or the previous answer on the link if that came later
  // (the driver's max of the two); `ahead`: commands in flight ahead of it
  // when it was written. Only answers that queued behind others teach the
  // pace: their mean time from `begun` is the server's (and the reader's)
  // time per command, which a round trip does not inflate.
  struct answered {
    clock::time_point now;
    clock::time_point begun;
    std::size_t ahead = 0;
  };
  // The link dropped: what comes next goes to a new connection, whose pace
  // is not known yet.
  struct link_reset {};
  using event = std::variant<offered, answered, link_reset>;

  // ---- actions ----
  struct write {};  // write the offered command now
  struct hold {};   // the window is full: offer it again after an answer
  // It would not be answered before its deadline: fail it unwritten.
  // `expected`: how long its answer would take (expected(in_flight)).
  struct fail_unsent {
    std::chrono::microseconds expected{0};
  };
  using action = std::variant<write, hold, fail_unsent>;
  using actions = action_list<action, 1>;

  actions on(const event& e);

  // How long a command written now behind `in_flight` others waits for the
  // server's work on them (a round trip is not counted: pipelined, round
  // trips overlap).
  std::chrono::microseconds expected(std::size_t in_flight) const {
    return per_command_ * static_cast<long long>(in_flight);
  }
  std::chrono::microseconds per_command() const { return per_command_; }
  std::size_t limit() const { return limit_; }

 private:
  actions handle(const offered& e) const;
  actions handle(const answered& e);
  actions handle(const link_reset& e);

  std::size_t limit_;
  // The mean of the samples (a read of k answers gives one interval and
  // k - 1 zeros), an exponential average over about 32 answers.
  std::chrono::microseconds per_command_{0};
};

}  // namespace warden::detail
