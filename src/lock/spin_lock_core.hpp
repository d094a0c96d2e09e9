// The spin lock: Lock's layout and scripts, but its waiters poll with the
// SpinBackoff's delays instead of subscribing, and nothing is published when
// it is released (nobody listens).
#pragma once

#include <memory>
#include <string>

#include "lock/lock_core.hpp"
#include "lock/spin_delays.hpp"

namespace warden::detail {

class SpinLockCore final : public LockCore {
 public:
  // `backoff` must be valid (spin_backoff_problem).
  SpinLockCore(std::shared_ptr<LockHost> client, std::string name, const PollBackoff& backoff)
      : LockCore(std::move(client), std::move(name)), backoff_(backoff) {}

  const PollBackoff* polling() const override { return &backoff_; }
  lock_kind kind() const override { return lock_kind::spin; }

 protected:
  const char* unlock_message() const override { return ""; }

 private:
  PollBackoff backoff_;
};

}  // namespace warden::detail
