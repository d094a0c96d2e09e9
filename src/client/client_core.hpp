// The shared state of a Client, and the composition root: it builds the I/O
// thread, the topology, the book of holds and its watchdog, and keeps the
// registry of lock cores; it is the LockHost the lock cores run in.
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
#include "lock/hold_book.hpp"
#include "lock/lock_host.hpp"
#include "lock/watchdog.hpp"
#include "topology/node.hpp"
#include "topology/topology.hpp"

namespace warden::detail {

class LockCore;

class ClientCore final : public LockHost, public std::enable_shared_from_this<ClientCore> {
 public:
  explicit ClientCore(Config config);
  ~ClientCore() override;

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

  // The whole configuration (LockHost::config() has what lock code reads).
  const Config& client_config() const { return config_; }

  // The I/O thread itself (what the host's loop() offers lock code is a view of it).
  EventLoop& event_loop() { return loop_; }
  HostLoop& loop() override { return loop_view_; }
  // Which holds this client has (any thread may query it).
  HoldBook& holds() override { return holds_; }

  // Runs `task` on the I/O thread; false (task dropped) once shut down.
  bool post(std::function<void()> task) override { return loop_.post(std::move(task)); }
  // The same for a user's new operation, which Client::close refuses from
  // its start: false (task dropped) once closing or shut down. What an
  // operation under way posts for itself uses post().
  bool post_operation(std::function<void()> task) override {
    if (closing_.load(std::memory_order_acquire)) return false;
    return loop_.post(std::move(task));
  }

  // Where commands go (one server or a cluster), as lock code and the
  // handles ask about it. Loop thread, except label() and describe().
  HostTopology& topology() override { return topology_view_; }
  const HostTopology& topology() const { return topology_view_; }
  // The topology itself (readiness, closing). Loop thread.
  Topology& router() { return *topology_; }

  // The topology's, routed by the first key. A script built before the
  // topology knows its publish command waits until it does, and then has
  // the stand-in replaced (publish_stand_in).
  using LockHost::run_script;
  void run_script(Command command, std::string_view route_key, clock::time_point deadline, bool idempotent,
                  reply_handler handler, replica_wait wait = replica_wait::none) override {
    if (topology_->publish_command() == nullptr) {
      return run_script_once_publish_known(std::move(command), route_key, deadline, idempotent, std::move(handler),
                                           wait);
    }
    topology_->run_script(std::move(command), route_key, deadline, idempotent, std::move(handler), wait);
  }
  void send(Command command, std::string_view route_key, clock::time_point deadline, bool idempotent,
            reply_handler handler) override {
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
  void forget_core(const LockCore& core, std::string_view kind) override;
  // The core, unless its destruction has begun.
  static std::shared_ptr<LockCore> still_alive(LockCore& core);

  // Operations that may wait without a command in flight (an acquire parked on
  // pub/sub) register here so that shutdown can fail them.
  std::uint64_t track(std::function<void()> fail_with_shutdown) override;
  void untrack(std::uint64_t ticket) override;
  // The same for an operation that is its own hook (loop thread). Tracking a
  // tracked hook, or untracking one that is not, does nothing.
  void track(ShutdownHook& hook) override { hooks_.track(hook); }
  void untrack(ShutdownHook& hook) override { hooks_.untrack(hook); }

  void log(log_level level, const std::string& message) const override {
    if (config_.logger) config_.logger(level, message);
  }

  // The user's hooks, guarded (what they throw is logged); each may be empty.
  // Loop thread.
  const Observer& observer() const override { return config_.observer; }

 private:
  // The loop and the topology as lock code sees them: forwarding views.
  struct LoopView final : HostLoop {
    explicit LoopView(EventLoop& loop) : loop(loop) {}
    TimerQueue::id at(clock::time_point when, std::function<void()> fn) override {
      return loop.at(when, std::move(fn));
    }
    TimerQueue::id after(std::chrono::milliseconds delay, std::function<void()> fn) override {
      return loop.after(delay, std::move(fn));
    }
    void cancel(TimerQueue::id timer) override { loop.cancel(timer); }
    void schedule(Timer& timer, clock::time_point when) override { loop.schedule(timer, when); }
    void cancel(Timer& timer) override { loop.cancel(timer); }
    bool in_loop_thread() const override { return loop.in_loop_thread(); }
    bool led_here() const override { return loop.led_here(); }
    void lead_until(const std::function<bool()>& done) override { loop.lead_until(done); }
    EventLoop& loop;
  };
  struct TopologyView final : HostTopology {
    explicit TopologyView(const std::unique_ptr<Topology>& topology) : topology(topology) {}
    std::shared_ptr<ServerLinks> node_for(std::string_view key) override { return topology->node_for(key); }
    std::string describe(std::string_view key) const override { return topology->describe(key); }
    std::string server_of(std::string_view key) override { return topology->server_of(key); }
    const std::string& label() const override { return topology->label(); }
    const char* publish_command() const override {
      const char* known = topology->publish_command();
      return known != nullptr ? known : publish_stand_in;
    }
    std::uint32_t group_of(std::string_view key) const override { return topology->group_of(key); }
    const std::unique_ptr<Topology>& topology;
  };

  Config config_;
  EventLoop loop_;
  std::unique_ptr<Topology> topology_;
  LoopView loop_view_{loop_};
  TopologyView topology_view_{topology_};
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
  ShutdownHooks hooks_;
  std::uint64_t next_ticket_ = 1;
  std::atomic<bool> shut_down_{false};
  std::atomic<bool> closing_{false};  // Client::close began: no new operation

  // What lock code is given as the publish command while the topology does
  // not know it yet (a cluster before its first slot table): no Redis
  // command has this name, and run_script() replaces it before the script
  // leaves.
  static constexpr const char* publish_stand_in = "\x01warden:publish\x01";
  // run_script() before the publish command is known (client_core.cpp).
  void run_script_once_publish_known(Command command, std::string_view route_key, clock::time_point deadline,
                                     bool idempotent, reply_handler handler, replica_wait wait);

  // Fails the operations that wait without a command in flight (parked
  // acquires), each with errc::shut_down. Loop thread.
  void fail_waiters();
  // One round of release_all: releases what the book holds now.
  struct ReleaseRound;
  void release_round(std::shared_ptr<ReleaseRound> round);
};

// A version 4 UUID (RFC 4122, as Java's UUID.randomUUID()): 122 bits from the
// operating system's random source (getrandom), lower-case hex, 8-4-4-4-12.
// Throws std::system_error when the OS has no randomness to give.
std::string random_uuid();

}  // namespace warden::detail
