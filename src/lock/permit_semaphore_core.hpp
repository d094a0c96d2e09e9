// One named PermitExpirableSemaphore of one client, in Redisson's layout:
// the key NAME holds the free permits, the ZSET {NAME}:timeout the permits
// held (id -> expiry, epoch ms by the server's clock), releases publish the
// new count on redisson_sc:{NAME}. Every script reclaims expired permits
// first. All operations run on the I/O thread and report there.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <warden/cancel.hpp>

#include "io/command.hpp"
#include "io/script.hpp"
#include "io/shared_text.hpp"

namespace warden::detail {

class LockHost;
class PermitKeeper;

class PermitSemaphoreCore : public std::enable_shared_from_this<PermitSemaphoreCore> {
 public:
  using milliseconds = std::chrono::milliseconds;
  // done(error, permit id or nullopt when the wait ran out, message)
  using acquire_done =
      std::function<void(std::error_code, const std::optional<std::string>& id, const std::string& message)>;
  using count_done = std::function<void(std::error_code, long long value, const std::string& message)>;

  // `keeper`: the client's watchdog side of this semaphore (one per client
  // and name, shared by every handle), which keeps permits taken without a
  // lease alive.
  PermitSemaphoreCore(std::shared_ptr<LockHost> client, std::string name, std::shared_ptr<PermitKeeper> keeper);

  std::string_view name() const { return name_; }
  const std::string& name_string() const { return name_; }
  std::string_view channel() const { return channel_.view(); }
  const SharedText& channel_text() const { return channel_; }
  const std::string& timeouts() const { return timeouts_; }
  LockHost& client() const { return *client_; }
  const std::shared_ptr<PermitKeeper>& keeper() const { return keeper_; }

  // A permit with `lease` (nullopt: the watchdog's lease, renewed every
  // third of it while this client lives), waiting up to `wait` (nullopt: for
  // ever; zero: one try).
  void acquire(std::optional<milliseconds> lease, std::optional<milliseconds> wait, cancel_token cancel,
               acquire_done done);
  // done(error, 1 released / 0 not held / -1 expired)
  void release(const std::string& id, count_done done);
  // done(error, 1 set / 0 not held). A kept permit is no longer renewed.
  void update_lease(const std::string& id, std::optional<milliseconds> lease, count_done done);
  void available(count_done done);
  void acquired(count_done done);
  // done(error, ms left / -1 never expires / -2 not held): nothing written
  // but the reclaiming of expired permits.
  void lease_time(const std::string& id, count_done done);
  // done(error, 1 set / 0 not)
  void try_set(long long permits, count_done done);
  void set(long long permits, count_done done);

  std::string message(std::string_view what) const;
  const char* publish_command() const;

 private:
  void run_counting(std::string_view what, const Script& script, std::vector<std::string> args, bool idempotent,
                    replica_wait wait, count_done done);

  std::shared_ptr<LockHost> client_;
  std::string name_;
  SharedText channel_;    // redisson_sc:{NAME}
  std::string timeouts_;  // {NAME}:timeout
  std::shared_ptr<PermitKeeper> keeper_;
};

}  // namespace warden::detail
