// The reconnect state machine of one connection, free of I/O so that its
// decisions can be tested without a server. A pure machine (see
// docs/pure-machines.md): Connection feeds it events with on() and performs
// the actions it answers.
#pragma once

#include <chrono>
#include <system_error>
#include <variant>

#include "io/action_list.hpp"
#include "io/backoff.hpp"

namespace warden::detail {

class LinkState {
 public:
  enum class state {
    idle,         // not started
    connecting,   // TCP connect and set-up (AUTH, SELECT) under way
    ready,        // commands flow
    backing_off,  // waiting before the next attempt
    closed,       // shut down for good
  };

  // ---- events ----
  // Time for an attempt: the connection was started, or its back-off is over.
  struct connect_due {};
  // The attempt's set-up commands were answered: commands may flow.
  struct set_up {};
  // An attempt failed or a ready link dropped. `closed_unanswered`: a
  // plaintext attempt that the server closed during set-up before answering
  // anything, which is what a TLS port does with plaintext (Redis resets it).
  struct link_failed {
    std::error_code why;
    bool closed_unanswered = false;
  };
  // Shut down: nothing reconnects after this.
  struct close_requested {};
  using event = std::variant<connect_due, set_up, link_failed, close_requested>;

  // ---- actions ----
  struct open {};  // start a connect attempt
  // Attempt again after `delay`: at once after a link that was ready, then
  // growing with each consecutive failure.
  struct retry_after {
    std::chrono::milliseconds delay{0};
  };
  // Waiting will not cure this failure (credentials or trust refused, a peer
  // that is not Redis, a port that expects TLS): fail what is queued now
  // instead of keeping it for a connection that will be refused the same way.
  struct fail_queued {};
  using action = std::variant<open, retry_after, fail_queued>;
  using actions = action_list<action, 2>;

  explicit LinkState(Backoff backoff) : backoff_(std::move(backoff)) {}

  actions on(const event& e);

  state current() const { return state_; }
  bool ready() const { return state_ == state::ready; }
  bool closed() const { return state_ == state::closed; }

  // Whether the last two attempts or more in a row were closed unanswered:
  // once may be a server going away as it accepted us (the next attempt is
  // then refused, or answered); twice, the port most likely expects TLS, and
  // waiting will not change that.
  bool refuses_plaintext() const { return unanswered_closes_ >= 2; }

  // Why the link last failed (empty if it never did, or connected since).
  std::error_code last_error() const { return last_error_; }
  // Whether the link was ever ready: a refused first connect is reported
  // differently from a link that was lost.
  bool ever_connected() const { return ever_connected_; }
  int failures() const { return failures_; }

 private:
  actions handle(const connect_due& e);
  actions handle(const set_up& e);
  actions handle(const link_failed& e);
  actions handle(const close_requested& e);

  Backoff backoff_;
  state state_ = state::idle;
  std::error_code last_error_;
  int failures_ = 0;
  int unanswered_closes_ = 0;  // consecutive attempts closed unanswered
  bool ever_connected_ = false;
};

}  // namespace warden::detail
