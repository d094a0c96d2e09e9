// The spin lock: Lock's layout and scripts, but its waiters poll with the
// SpinBackoff's delays instead of subscribing, and nothing is published when
// it is released (nobody listens).
#pragma once

#include <memory>
#include <string>

#include <warden/spin_lock.hpp>

#include "lock/lock_core.hpp"

namespace warden::detail {

class SpinLockCore final : public LockCore {
 public:
  // `backoff` must be valid (spin_backoff_problem).
  SpinLockCore(std::shared_ptr<ClientCore> client, std::string name, const SpinBackoff& backoff)
      : LockCore(std::move(client), std::move(name)), backoff_(backoff) {}

  const SpinBackoff* polling() const override { return &backoff_; }
  lock_kind kind() const override { return lock_kind::spin; }

 protected:
  const char* unlock_message() const override { return ""; }

 private:
  SpinBackoff backoff_;
};

}  // namespace warden::detail
