// The shared state of a Client: I/O thread, nodes, the book of holds and its
// watchdog, lock cores.
#pragma once

#include <atomic>
#include <charconv>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include <warden/config.hpp>
#include <warden/error.hpp>
#include <warden/thread_id.hpp>

#include "io/event_loop.hpp"
#include "topology/node.hpp"
#include "topology/topology.hpp"
#include "lock/hold_book.hpp"
#include "lock/watchdog.hpp"

namespace warden::detail {

class LockCore;

// An operation that may wait with no command in flight (an acquire parked on
// pub/sub or on its timer): the Client's shutdown fails it. It is linked
// into the client's list while tracked, so tracking allocates nothing; a
// crowd of parked waiters costs no table entry or callback each.
class ShutdownHook {
 public:
  ShutdownHook() = default;
  ShutdownHook(const ShutdownHook&) = delete;
  ShutdownHook& operator=(const ShutdownHook&) = delete;

  bool tracked() const { return next_ != nullptr; }

 protected:
  virtual ~ShutdownHook() = default;

 private:
  friend class ClientCore;
  // Runs on the I/O thread during shutdown, once untracked.
  virtual void on_shutdown() = 0;

  ShutdownHook* prev_ = nullptr;
  ShutdownHook* next_ = nullptr;  // null: not tracked
};

class ClientCore : public std::enable_shared_from_this<ClientCore> {
 public:
  explicit ClientCore(Config config);
  ~ClientCore();

  // Fails pending calls with errc::shut_down, closes connections, joins the
  // I/O thread. Called by ~Client and Client::close (the first call does
  // it), never from the I/O thread.
  void shutdown();

  // ---- readiness and closing (client_lifecycle.cpp) ----

  // Client::wait_until_connected: Topology::probe, failed with
  // errc::shut_down by a shutdown that comes first. `done` runs once, on the
  // loop thread. Loop thread.
  void probe(clock::time_point deadline, Topology::probe_done done);

  // Client::close, first step (any thread but the loop's): no new operation
  // is taken (post_operation() refuses: calls fail with errc::shut_down), waiting
  // acquires fail with errc::shut_down, and every hold in the book is
  // released, level by level, until the book is empty. `done(all)` runs
  // once, on the loop thread, when every release was answered: `all` is
  // false when a release failed (the hold is left to expire with its lease).
  // Returns false, without calling `done`, when the client is closing or
  // shut down already.
  bool release_all(std::function<void(bool all)> done);

  const Config& config() const { return config_; }
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

  EventLoop& loop() { return loop_; }
  // Which holds this client has (any thread may query it).
  HoldBook& holds() { return holds_; }

  // Runs `task` on the I/O thread; false (task dropped) once shut down.
  bool post(std::function<void()> task) { return loop_.post(std::move(task)); }
  // The same for a user's new operation, which Client::close refuses from
  // its start: false (task dropped) once closing or shut down. What an
  // operation under way posts for itself uses post().
  bool post_operation(std::function<void()> task) {
    if (closing_.load(std::memory_order_acquire)) return false;
    return loop_.post(std::move(task));
  }

  // Where commands go (one server or a cluster). Loop thread, except
  // Topology::label() and Topology::describe().
  Topology& topology() { return *topology_; }
  const Topology& topology() const { return *topology_; }

  // Shorthands of the topology's: routed by the first key.
  void run_script(const Script& script, const std::vector<std::string>& keys, const std::vector<std::string>& args,
                  clock::time_point deadline, bool idempotent, Connection::Handler handler,
                  replica_wait wait = replica_wait::none) {
    topology_->run_script(Command::evalsha(script, keys, args), keys.empty() ? std::string_view() : keys.front(),
                          deadline, idempotent, std::move(handler), wait);
  }
  // A script call encoded by the caller (the watchdog's renewal batches).
  void run_script(Command command, std::string_view route_key, clock::time_point deadline, bool idempotent,
                  Connection::Handler handler, replica_wait wait = replica_wait::none) {
    topology_->run_script(std::move(command), route_key, deadline, idempotent, std::move(handler), wait);
  }
  void send(Command command, std::string_view route_key, clock::time_point deadline, bool idempotent,
            Connection::Handler handler) {
    topology_->send(std::move(command), route_key, deadline, idempotent, std::move(handler));
  }

  // One core per kind and name, shared by every handle of it, so that holds,
  // the lost-lock callback and waiters agree whichever handle is used. `args`
  // follow the client and the name to Core's constructor; `kind` must tell
  // apart cores built with different ones. The registry holds no reference:
  // a core leaves it when its last handle, hold and waiter are gone
  // (forget_core), so nothing is kept for a name nobody uses.
  template <class Core, class... Args>
  std::shared_ptr<Core> lock_core(std::string_view kind, std::string_view name, Args&&... args) {
    std::lock_guard<std::mutex> guard(locks_mutex_);
    if (auto found = locks_.find(core_name{kind, name}); found != locks_.end()) {
      if (auto existing = still_alive(*found->second)) return std::static_pointer_cast<Core>(existing);
      // Being destroyed on another thread: its entry (whose key is its own
      // name) makes way for the new core.
      locks_.erase(found);
    }
    auto core = std::make_shared<Core>(shared_from_this(), std::string(name), std::forward<Args>(args)...);
    const std::string& interned = *kinds_.emplace(kind).first;
    core->registered_as(interned);
    locks_.emplace(core_name{interned, core->name()}, core.get());
    return core;
  }
  // A registered core is being destroyed (any thread).
  void forget_core(const LockCore& core, std::string_view kind);
  // The core, unless its destruction has begun.
  static std::shared_ptr<LockCore> still_alive(LockCore& core);

  // Operations that may wait without a command in flight (an acquire parked on
  // pub/sub) register here so that shutdown can fail them.
  std::uint64_t track(std::function<void()> fail_with_shutdown);
  void untrack(std::uint64_t ticket);
  // The same for an operation that is its own hook (loop thread). Tracking a
  // tracked hook, or untracking one that is not, does nothing.
  void track(ShutdownHook& hook);
  void untrack(ShutdownHook& hook);

  void log(log_level level, const std::string& message) const {
    if (config_.logger) config_.logger(level, message);
  }

  // The user's hooks, guarded (what they throw is logged); each may be empty.
  // Loop thread.
  const Observer& observer() const { return config_.observer; }

 private:
  Config config_;
  std::string id_;
  EventLoop loop_;
  std::unique_ptr<Topology> topology_;
  HoldBook holds_;
  Watchdog watchdog_;
  // A core's kind and name, viewing the core's own name and kinds_.
  struct core_name {
    std::string_view kind;
    std::string_view name;
    bool operator==(const core_name& other) const { return kind == other.kind && name == other.name; }
  };
  struct core_name_hash {
    std::size_t operator()(const core_name& key) const noexcept {
      return std::hash<std::string_view>{}(key.name) * 31 + std::hash<std::string_view>{}(key.kind);
    }
  };
  std::mutex locks_mutex_;  // guards locks_ and kinds_
  std::unordered_map<core_name, LockCore*, core_name_hash> locks_;
  std::set<std::string, std::less<>> kinds_;  // few: one per lock kind and SpinLock back-off
  std::unordered_map<std::uint64_t, std::function<void()>> tracked_;
  // The tracked hooks: a circular list through this sentinel.
  struct HookList final : ShutdownHook {
    ~HookList() override = default;
    void on_shutdown() override {}
  };
  HookList hooks_;  // linked to itself by the constructor
  std::uint64_t next_ticket_ = 1;
  std::atomic<bool> shut_down_{false};
  std::atomic<bool> closing_{false};  // Client::close began: no new operation

  // Fails the operations that wait without a command in flight (parked
  // acquires), each with errc::shut_down. Loop thread.
  void fail_waiters();
  // One round of release_all: releases what the book holds now.
  struct ReleaseRound;
  void release_round(std::shared_ptr<ReleaseRound> round);
};

// "warden: lock 'NAME' on HOST:PORT: WHAT"
std::string lock_message(std::string_view lock, std::string_view server, std::string_view what);

// A version 4 UUID (RFC 4122, as Java's UUID.randomUUID()): 122 bits from the
// operating system's random source (getrandom), lower-case hex, 8-4-4-4-12.
// Throws std::system_error when the OS has no randomness to give.
std::string random_uuid();

}  // namespace warden::detail
