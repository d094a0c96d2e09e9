// The shared state and the operations of one count-down latch handle, in
// Redisson's RCountDownLatch layout: the key is the name, a string holding
// the count; the channel redisson_countdownlatch__channel__{NAME} is told "0"
// when the count reaches 0 and "1" when a new count is set or the latch is
// deleted. All operations run on the I/O thread and report through
// callbacks there.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <warden/cancel.hpp>

#include "io/reply.hpp"
#include "io/shared_text.hpp"

namespace warden::detail {

class LockHost;
struct Script;

class CountDownLatchCore : public std::enable_shared_from_this<CountDownLatchCore> {
 public:
  using milliseconds = std::chrono::milliseconds;
  // `value`: the operation's answer (a count, or 1/0 for yes/no); `message`
  // the error's text ("warden: count-down latch 'NAME' on SERVER: WHAT").
  using done_fn = std::function<void(std::error_code, std::int64_t value, const std::string& message)>;

  CountDownLatchCore(std::shared_ptr<LockHost> client, std::string name);

  const std::string& name() const { return name_; }
  LockHost& client() const { return *client_; }
  // The channel its waiters join (keys::latch_channel), shared with them and
  // the subscriber.
  const SharedText& channel() const { return channel_; }

  // Sets the count to `count` (> 0, checked by the caller) if the latch has
  // none; value 1 if set, 0 if not.
  void try_set_count(std::int64_t count, done_fn done);
  // Counts down by one; value: the count left (0: this call opened it,
  // negative: it was open already).
  void count_down(done_fn done);
  // Value: the count, 0 when open.
  void count(done_fn done);
  // Deletes the latch; value 1 if there was one.
  void remove(done_fn done);
  // Waits until the count is 0, at most `wait` (nullopt: for ever); value 1
  // if it opened, 0 when the wait ran out.
  void wait(std::optional<milliseconds> wait, cancel_token cancel, done_fn done);

  // "warden: count-down latch 'NAME' on SERVER: WHAT"
  std::string message(std::string_view what) const;

 private:
  // Runs a latch script that may publish `publish_message` on the channel:
  // in the script when the channel shares the name's cluster slot, else
  // (Redis refuses keys of two slots in one script) by a (S)PUBLISH of its
  // own, routed by the channel, once the script answers `publish_when`.
  void run_write(const Script& script, const char* publish_message, std::int64_t publish_when,
                 std::vector<std::string> extra_args, bool idempotent, std::string_view what, done_fn done);
  // Whether the channel hashes to the name's slot (always, outside a cluster).
  bool channel_shares_slot() const;

  std::shared_ptr<LockHost> client_;
  std::string name_;
  SharedText channel_;
};

}  // namespace warden::detail
