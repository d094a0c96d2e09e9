// One named Semaphore of one client, in Redisson's RSemaphore layout: the
// key NAME holds the available permits (a missing key counts 0), releases
// publish the new count on redisson_sc:{NAME}. Permits have no owner, so
// nothing here is per thread and the book of holds is not involved. All
// operations run on the I/O thread and report through callbacks there.
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
#include "io/reply.hpp"
#include "io/script.hpp"
#include "io/shared_text.hpp"

namespace warden::detail {

class LockHost;

class SemaphoreCore : public std::enable_shared_from_this<SemaphoreCore> {
 public:
  using milliseconds = std::chrono::milliseconds;
  using acquire_done = std::function<void(std::error_code, bool acquired, const std::string& message)>;
  // A count (the new available count, a flag 1/0, ...) or an error.
  using count_done = std::function<void(std::error_code, long long value, const std::string& message)>;

  SemaphoreCore(std::shared_ptr<LockHost> client, std::string name);
  ~SemaphoreCore();
  SemaphoreCore(const SemaphoreCore&) = delete;
  SemaphoreCore& operator=(const SemaphoreCore&) = delete;

  std::string_view name() const { return name_; }
  const std::string& name_string() const { return name_; }
  std::string_view channel() const { return channel_.view(); }
  const SharedText& channel_text() const { return channel_; }
  LockHost& client() const { return *client_; }

  // Takes `permits` once that many are available, waiting up to `wait`
  // (nullopt: for ever; zero: one try). done(error, acquired).
  void acquire(long long permits, std::optional<milliseconds> wait, cancel_token cancel, acquire_done done);
  // Gives `permits` back; done(error, new available count).
  void release(long long permits, count_done done);
  // Gives `permits` back only if the semaphore's key exists (Redisson's
  // releaseIfExists); done(error, 1 released / 0 no such semaphore).
  void release_if_exists(long long permits, count_done done);
  // done(error, available count): nothing written.
  void available(count_done done);
  // Sets the count to 0; done(error, the count it had).
  void drain(count_done done);
  // Sets the count to `permits` if the semaphore has none yet; done(error, 1 set / 0 not).
  void try_set(long long permits, count_done done);
  // Adds `permits` to the count; done(error, new available count).
  void add(long long permits, count_done done);

  // "warden: semaphore 'NAME' on SERVER: WHAT"
  std::string message(std::string_view what) const;
  // The command scripts publish with ("publish" or "spublish"). Loop thread.
  const char* publish_command() const;

 private:
  // Runs a script of this semaphore that answers an integer, once, within
  // one command's time; `idempotent`: it may be re-sent after a lost reply.
  void run_counting(std::string_view what, const Script& script, std::vector<std::string> keys,
                    std::vector<std::string> args, bool idempotent, replica_wait wait, count_done done);

  std::shared_ptr<LockHost> client_;
  std::string name_;
  SharedText channel_;  // redisson_sc:{NAME}, shared with its waiters and the subscriber
};

}  // namespace warden::detail
