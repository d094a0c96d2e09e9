// The reconnect state machine of one connection, free of I/O so that its
// decisions can be tested without a server.
#pragma once

#include <chrono>
#include <system_error>

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

  explicit LinkState(Backoff backoff) : backoff_(std::move(backoff)) {}

  state current() const { return state_; }
  bool ready() const { return state_ == state::ready; }
  bool closed() const { return state_ == state::closed; }

  // idle or backing_off → connecting. False if that transition is not allowed.
  bool begin_connect();

  // connecting → ready. Resets the back-off: the next failure retries quickly.
  void connected();

  // An attempt failed or a ready link dropped: → backing_off. Returns how long
  // to wait before the next attempt; consecutive failures back off further.
  // `closed_unanswered`: a plaintext attempt that the server closed during
  // set-up before answering anything, which is what a TLS port does with
  // plaintext (Redis resets it).
  std::chrono::milliseconds failed(std::error_code why, bool closed_unanswered = false);

  // Whether the last two attempts or more in a row were closed unanswered:
  // once may be a server going away as it accepted us (the next attempt is
  // then refused, or answered); twice, the port most likely expects TLS, and
  // waiting will not change that.
  bool refuses_plaintext() const { return unanswered_closes_ >= 2; }

  // Any state → closed; nothing reconnects after this.
  void close() { state_ = state::closed; }

  // Why the link last failed (empty if it never did, or connected since).
  std::error_code last_error() const { return last_error_; }
  // Whether the link was ever ready: a refused first connect is reported
  // differently from a link that was lost.
  bool ever_connected() const { return ever_connected_; }
  int failures() const { return failures_; }

 private:
  Backoff backoff_;
  state state_ = state::idle;
  std::error_code last_error_;
  int failures_ = 0;
  int unanswered_closes_ = 0;  // consecutive attempts closed unanswered
  bool ever_connected_ = false;
};

}  // namespace warden::detail
