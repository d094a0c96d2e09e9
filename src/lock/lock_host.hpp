// What lock/ and composite/ code needs from the Client it runs in, and
// nothing more: the one way those layers reach the layers above and beside
// them. The client (src/client, the composition root) implements it over its
// event loop and topology; unit tests implement it with a fake that has no
// loop thread and no server. Lock code names these members as it did when it
// held the client itself: host.config().command_timeout, host.loop().at(...),
// host.topology().node_for(key), host.run_script(...).
#pragma once

#include <charconv>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <warden/config.hpp>
#include <warden/observer.hpp>
#include <warden/thread_id.hpp>

#include "io/command.hpp"
#include "io/reply.hpp"
#include "io/script.hpp"
#include "io/server_links.hpp"
#include "io/timer_queue.hpp"
#include "lock/hold_book.hpp"
#include "lock/settle_queue.hpp"

namespace warden::detail {

class LockCore;

// The configuration values lock code reads, copied from the Client's
// Config when the client is made.
struct LockSettings {
  std::chrono::milliseconds command_timeout{3'000};
  int retry_attempts = 3;
  std::chrono::milliseconds retry_backoff_min{50};
  std::chrono::milliseconds retry_backoff_max{2'000};
  std::chrono::milliseconds lock_watchdog_timeout{30'000};
  int lock_watchdog_batch_size = 100;
  std::chrono::milliseconds fair_lock_wait_timeout{300'000};
  // Settles of lost attempts in flight at once (SettlePacer): an eighth of
  // a connection's window (ConnectionOptions::max_in_flight), so background
  // work never fills it.
  std::size_t settles_in_flight = 128;
};

// An operation that may wait with no command in flight (an acquire parked on
// pub/sub or on its timer): the host's shutdown fails it. It is linked into
// the host's list while tracked, so tracking allocates nothing; a crowd of
// parked waiters costs no table entry or callback each.
class ShutdownHook {
 public:
  ShutdownHook() = default;
  ShutdownHook(const ShutdownHook&) = delete;
  ShutdownHook& operator=(const ShutdownHook&) = delete;

  bool tracked() const { return next_ != nullptr; }

 protected:
  virtual ~ShutdownHook() = default;

 private:
  friend class ShutdownHooks;
  // Runs on the I/O thread during shutdown, once untracked.
  virtual void on_shutdown() = 0;

  ShutdownHook* prev_ = nullptr;
  ShutdownHook* next_ = nullptr;  // null: not tracked
};

// The tracked hooks of one host: a circular list through a sentinel.
class ShutdownHooks {
 public:
  ShutdownHooks() { head_.prev_ = head_.next_ = &head_; }
  ShutdownHooks(const ShutdownHooks&) = delete;
  ShutdownHooks& operator=(const ShutdownHooks&) = delete;

  bool empty() const { return head_.next_ == &head_; }
  // Tracking a tracked hook, or untracking one that is not, does nothing.
  void track(ShutdownHook& hook);
  void untrack(ShutdownHook& hook);
  // Untracks and fails every hook, one at a time off the front: failing one
  // may make others leave (or, woken, park again: they are failed too).
  void fail_all();

 private:
  struct Head final : ShutdownHook {
    ~Head() override = default;
    void on_shutdown() override {}
  };
  Head head_;
};

// The host's I/O thread, as lock code schedules on it. Loop thread only,
// except in_loop_thread(), led_here() and lead_until().
class HostLoop {
 public:
  virtual TimerQueue::id at(clock::time_point when, std::function<void()> fn) = 0;
  virtual TimerQueue::id after(std::chrono::milliseconds delay, std::function<void()> fn) = 0;
  virtual void cancel(TimerQueue::id timer) = 0;
  // An intrusive timer (an acquire is its own): no allocation per wait.
  virtual void schedule(Timer& timer, clock::time_point when) = 0;
  virtual void cancel(Timer& timer) = 0;
  // Whether the calling thread runs the loop now (the loop thread, or a
  // caller running its own task in place).
  virtual bool in_loop_thread() const = 0;
  // Whether a blocking caller leads the loop on this thread (EventLoop::lead_until).
  virtual bool led_here() const = 0;
  // A blocking caller runs the loop itself until `done` (EventLoop::lead_until).
  virtual void lead_until(const std::function<bool()>& done) = 0;

 protected:
  ~HostLoop() = default;
};

// Where the host's commands go, as lock code asks about it.
class HostTopology {
 public:
  // The server serving `key` now (its subscriber, its command link's
  // state); nullptr when none is known (a cluster whose slot table is not
  // read yet, or has no master for the slot). Loop thread.
  virtual std::shared_ptr<ServerLinks> node_for(std::string_view key) = 0;
  // Where `key` goes, in words, for messages (any thread).
  virtual std::string describe(std::string_view key) const = 0;
  // The address of the node serving `key` now, or describe(key) (loop thread).
  virtual std::string server_of(std::string_view key) = 0;
  // What the Client connects to, in words (any thread).
  virtual const std::string& label() const = 0;
  // The command unlock scripts publish with for a key's channel:
  // "publish", or "spublish" where waiters subscribe to shard channels
  // (before a cluster knows which, a stand-in that the host replaces before
  // the script leaves).
  virtual const char* publish_command() const = 0;
  // Holds whose keys share a group may be renewed by one script (one
  // cluster slot); 0 for a single server.
  virtual std::uint32_t group_of(std::string_view key) const = 0;

 protected:
  ~HostTopology() = default;
};

class LockHost {
 public:
  using reply_handler = std::function<void(Response&&)>;

  LockHost(std::string id, LockSettings settings)
      : id_(std::move(id)), config_(settings), settles_(settings.settles_in_flight) {}
  virtual ~LockHost() = default;
  LockHost(const LockHost&) = delete;
  LockHost& operator=(const LockHost&) = delete;

  const LockSettings& config() const { return config_; }
  // The client's UUID.
  const std::string& id() const { return id_; }
  // "<client id>:<thread>", the owner field of the lock hashes. Built often
  // (every call, every renewal): into a reused buffer, or in one allocation.
  void write_owner(thread_id thread, std::string& out) const {
    char digits[20];
    auto end = std::to_chars(digits, digits + sizeof digits, thread).ptr;
    out.reserve(id_.size() + 1 + static_cast<std::size_t>(end - digits));
    out.assign(id_);
    out += ':';
    out.append(digits, end);
  }
  std::string owner(thread_id thread) const {
    std::string out;
    write_owner(thread, out);
    return out;
  }

  virtual HostLoop& loop() = 0;
  virtual HostTopology& topology() = 0;
  // Which holds this client has (any thread may query it).
  virtual HoldBook& holds() = 0;
  // The settles of lost attempts, paced (loop thread).
  SettleQueue& settles() { return settles_; }

  // Runs `task` on the I/O thread; false (task dropped) once shut down.
  virtual bool post(std::function<void()> task) = 0;
  // The same for a user's new operation, refused (false) once the client is
  // closing too. What an operation under way posts for itself uses post().
  virtual bool post_operation(std::function<void()> task) = 0;

  // A script call, routed by `route_key` (its first key). `wait`: a lock
  // write that waits for replicas when Config::replica_sync is on.
  virtual void run_script(Command command, std::string_view route_key, clock::time_point deadline, bool idempotent,
                          reply_handler handler, replica_wait wait = replica_wait::none) = 0;
  // The same, encoded here: EVALSHA of `script` routed by the first key.
  void run_script(const Script& script, const std::vector<std::string>& keys, const std::vector<std::string>& args,
                  clock::time_point deadline, bool idempotent, reply_handler handler,
                  replica_wait wait = replica_wait::none) {
    run_script(Command::evalsha(script, keys, args), keys.empty() ? std::string_view() : keys.front(), deadline,
               idempotent, std::move(handler), wait);
  }
  // A plain command routed by `route_key`.
  virtual void send(Command command, std::string_view route_key, clock::time_point deadline, bool idempotent,
                    reply_handler handler) = 0;

  // Operations that may wait without a command in flight register here so
  // that shutdown can fail them (loop thread).
  virtual std::uint64_t track(std::function<void()> fail_with_shutdown) = 0;
  virtual void untrack(std::uint64_t ticket) = 0;
  virtual void track(ShutdownHook& hook) = 0;
  virtual void untrack(ShutdownHook& hook) = 0;

  // A registered lock core is being destroyed (any thread).
  virtual void forget_core(const LockCore& core, std::string_view kind) = 0;

  virtual void log(log_level level, const std::string& message) const = 0;
  // The user's hooks, guarded (what they throw is logged); each may be empty.
  virtual const Observer& observer() const = 0;

 private:
  std::string id_;
  LockSettings config_;
  SettleQueue settles_;
};

// "warden: lock 'NAME' on HOST:PORT: WHAT"
std::string lock_message(std::string_view lock, std::string_view server, std::string_view what);

}  // namespace warden::detail
