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
  // The command at the head of the queue could be written now. `in_flight`:
  // commands written on the link and not answered yet (those whose deadline
  // passed included: the server still has them to run).
  struct offered {
    clock::time_point now;
    clock::time_point deadline;
    std::size_t in_flight = 0;
  };
  // A written command was answered, or its deadline passed unanswered (it
  // took at least that long): how long it spent in flight, and how many
  // commands were in flight ahead of it when it was written.
  struct answered {
    clock::time_point now;
    clock::time_point written;
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

  // How long a command written now, behind `in_flight` others, is expected
  // to wait for its answer: a round trip, plus the server's time for each
  // command ahead of it (pipelined, the round trips overlap; the server's
  // work does not).
  std::chrono::microseconds expected(std::size_t in_flight) const {
    return round_trip_ + per_command_ * static_cast<long long>(in_flight);
  }
  std::chrono::microseconds round_trip() const { return round_trip_; }
  std::chrono::microseconds per_command() const { return per_command_; }
  std::size_t limit() const { return limit_; }

 private:
  actions handle(const offered& e) const;
  actions handle(const answered& e);
  actions handle(const link_reset& e);

  std::size_t limit_;
  // Both estimates rise half way towards a slower sample at once and fall an
  // eighth of the way towards a faster one: a queue building up is seen
  // within a few answers, and one quick answer amid slow ones does not let a
  // whole window of doomed commands out.
  std::chrono::microseconds round_trip_{0};   // from answers with nothing ahead
  std::chrono::microseconds per_command_{0};  // from answers with commands ahead
};

}  // namespace warden::detail
