// The fenced lock: a plain lock whose every acquire also increments the
// token counter redisson_lock_token:{NAME} and answers with the new value
// (lua/fenced_*.lua). Release, renewal, queries and force-unlock are Lock's.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <system_error>

#include "lock/lock_core.hpp"

namespace warden::detail {

class FencedLockCore final : public LockCore {
 public:
  FencedLockCore(std::shared_ptr<LockHost> client, std::string name);

  // Replies {-1, token} (acquired) or {pttl, -1}.
  ScriptCall acquire_call(thread_id owner, milliseconds lease) const override;
  AcquireAnswer read_acquire(const Reply& reply) const override;
  // A kept attempt draws a fresh token: 0, 1, or {1, token} when kept.
  ScriptCall resolve_call(thread_id owner, long long expected, milliseconds keep_lease) const override;
  std::optional<SettleAnswer> read_settle(const Reply& reply, bool keep) const override;
  lock_kind kind() const override { return lock_kind::fenced; }

  // The counter's value (GET; 0 when absent). Loop thread.
  void token(std::function<void(std::error_code, std::int64_t, const std::string& message)> done);

  const std::string& token_key() const { return token_key_; }

 private:
  std::string token_key_;
};

}  // namespace warden::detail
