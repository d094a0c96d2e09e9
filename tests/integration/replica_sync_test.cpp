// Replica acknowledgement of lock writes (Config::replica_sync): WAIT after
// every acquire, renewal and release, against real masters with replicas
// (a single server with one, and a master watched by sentinels). What a
// shortfall does to each write, that a master without replicas refuses
// locks at once, and the contrast in a failover: with replica_sync off, a
// hold the replica never had dies with its master; on, it is never taken.
#include <gtest/gtest.h>

#include <warden/warden.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <string>
#include <vector>

#include "redis_probe.hpp"
#include "redis_sentinel.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

using steady = std::chrono::steady_clock;

// What the observer and the log were told, for the assertions.
class Seen {
 public:
  Log log;

  void watch(Config& config) {
    log.watch(config);
    config.observer.on_acquire = [this](const AcquireEvent& event) {
      std::lock_guard<std::mutex> guard(mutex_);
      sync_misses_ += event.replica_sync_misses;
    };
    config.observer.on_release = [this](const ReleaseEvent& event) {
      std::lock_guard<std::mutex> guard(mutex_);
      if (event.replicas_missing) ++releases_missing_;
    };
    config.observer.on_renewal = [this](const RenewalEvent& event) {
      std::lock_guard<std::mutex> guard(mutex_);
      unsynced_renewals_ += event.unsynced;
    };
  }
  int sync_misses() {
    std::lock_guard<std::mutex> guard(mutex_);
    return sync_misses_;
  }
  int releases_missing() {
    std::lock_guard<std::mutex> guard(mutex_);
    return releases_missing_;
  }
  std::size_t unsynced_renewals() {
    std::lock_guard<std::mutex> guard(mutex_);
    return unsynced_renewals_;
  }

 private:
  std::mutex mutex_;
  int sync_misses_ = 0;
  int releases_missing_ = 0;
  std::size_t unsynced_renewals_ = 0;
};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A server that must have a replica (the mode asked for explicitly on a
// single server) but has none: acquires are refused unsent, write nothing,
// and the log says why and how to turn it off. A refusal did not run, so it
// does not end a wait: a bounded call tries until its bound and then fails
// with replica_sync_failed saying why; lock() waits on (as it would for a
// failover's new master to get its replica back), here until cancelled.
TEST(ReplicaSync, AServerWithoutReplicasRefusesLocksUnsentAndSaysWhy) {
  RedisServer server;
  Config config = fast_config(server);
  config.replica_sync.mode = replica_sync_mode::at_least_one;
  Seen seen;
  seen.watch(config);
  Client client(config);
  RedisProbe probe(server);
  auto before = probe.script_calls();
  Lock lock = client.get_lock("no-replicas");
  auto started = steady::now();
  try {
    lock.try_lock_for(300ms);
    ADD_FAILURE() << "locked on a server without replicas";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::replica_sync_failed) << error.what();
    EXPECT_TRUE(contains(error.what(), "has 0 replicas attached and replica_sync (at-least-one) needs 1"))
        << error.what();
  }
  EXPECT_GE(elapsed_ms(started), 300) << "a refusal ended the wait early";
  EXPECT_LT(elapsed_ms(started), 300 + 1'000) << "past the call's bound";

  // lock() has no wait of its own: it waits on, retrying with back-off (at
  // most retry_backoff_max, 200 ms, apart), well past the retry_attempts
  // tries after which it used to fail.
  int misses_before = seen.sync_misses();
  cancel_source cancel;
  auto waiting = lock.lock_async(current_thread_id(), lock_options().with_cancel(cancel.token()));
  EXPECT_EQ(waiting.wait_for(1500ms), std::future_status::timeout) << "lock() ended while refused";
  cancel.cancel();
  try {
    waiting.get();
    ADD_FAILURE() << "locked on a server without replicas";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::cancelled) << error.what();
  }
  EXPECT_GT(seen.sync_misses() - misses_before, config.retry_attempts + 1);
  EXPECT_EQ(probe.script_calls(), before);
  EXPECT_FALSE(probe.exists("no-replicas"));
  EXPECT_TRUE(seen.log.contains("set Config::replica_sync.mode to off")) << seen.log.all();
}

TEST(ReplicaSync, ASingleServerWithAReplicaWaitsForIt) {
  MasterWithReplica servers;
  // Attached, and done with its first sync: ROLE lists it from then on.
  ASSERT_TRUE(replica_online(servers.probe));
  Config config = fast_config(servers.master);
  config.replica_sync.mode = replica_sync_mode::all_known;
  Client client(config);
  Lock lock = client.get_lock("replicated");
  lock.lock();
  // Acknowledged: the replica has it by the time lock() returns.
  RedisProbe replica_probe(servers.replica);
  EXPECT_TRUE(replica_probe.exists("replicated"));
  lock.unlock();
  EXPECT_FALSE(replica_probe.exists("replicated"));
  EXPECT_GE(servers.probe.command_calls("wait"), 2);
}

Config sentinel_config(const RedisSentinelGroup& group) { return fast_sentinel_config(group.url()); }

// The replica stops (SIGSTOP) while still attached: WAIT runs out. A held
// lock's renewals are done but do not extend valid_until(); its release is
// done and reported short; a new acquire is taken back after each try and
// fails by its wait, leaving nothing.
TEST(ReplicaSync, AStoppedReplicaFailsAcquiresAndHoldsBackRenewals) {
  RedisSentinelGroup group;
  Config config = sentinel_config(group);
  config.lock_watchdog_timeout = 3s;  // a renewal every second
  config.replica_sync.timeout = 300ms;
  Seen seen;
  seen.watch(config);
  Client client(config);
  Lock held = client.get_lock("held-while-stopped");
  held.lock();
  RedisProbe master(group.node(0));

  group.node(1).pause();
  auto valid_at_pause = held.valid_until();
  ASSERT_TRUE(eventually([&] { return seen.unsynced_renewals() > 0; }, 3s));
  EXPECT_EQ(held.valid_until(), valid_at_pause) << "a renewal no replica has extended the hold";
  EXPECT_TRUE(held.is_held());

  Lock refused = client.get_lock("acquired-while-stopped");
  auto started = steady::now();
  try {
    refused.try_lock_for(1500ms);
    ADD_FAILURE() << "locked while the only replica is stopped";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::replica_sync_failed) << error.what();
    EXPECT_TRUE(contains(error.what(), "0 of 1 replica acknowledged it within")) << error.what();
    EXPECT_TRUE(contains(error.what(), "it was taken back")) << error.what();
  }
  EXPECT_LT(elapsed_ms(started), 1'500 + 2'000);
  EXPECT_GE(seen.sync_misses(), 2);
  EXPECT_FALSE(master.exists("acquired-while-stopped"));

  held.unlock();
  EXPECT_EQ(seen.releases_missing(), 1);
  EXPECT_FALSE(master.exists("held-while-stopped"));

  group.node(1).resume();
  // Back: locks are taken again, within an ordinary wait.
  EXPECT_TRUE(refused.try_lock_for(5s));
  refused.unlock();
}

// The replica is cut off for good (its reconnects are refused), a lock is
// asked for, and the master dies. Off: the lock is taken on the master
// alone, and the replica promoted without it lets the holder know its hold
// is gone (a second owner could have come in). On: the master has no
// replica attached, so the lock is never taken.
class ReplicaSyncFailover : public ::testing::TestWithParam<replica_sync_mode> {};

TEST_P(ReplicaSyncFailover, AHoldTheReplicaNeverHadIsLostOnlyWhenReplicaSyncIsOff) {
  const bool off = GetParam() == replica_sync_mode::off;
  RedisSentinelGroup group;
  Config config = sentinel_config(group);
  config.lock_watchdog_timeout = 3s;
  config.replica_sync.mode = GetParam();
  Client client(config);
  Lock lock = client.get_lock("cut-off");
  lock.lock();  // connects, and learns the replica is there
  lock.unlock();
  RedisProbe replica(group.node(1));
  ASSERT_FALSE(replica.command({"CONFIG", "SET", "masterauth", "not-the-masters"}).is_error());
  replica.command({"CLIENT", "KILL", "TYPE", "master"});
  ASSERT_TRUE(eventually([&] {
    return contains(replica.command({"INFO", "replication"}).str, "master_link_status:down");
  }));
  RedisProbe master(group.node(0));
  ASSERT_TRUE(eventually([&] { return contains(master.command({"INFO", "replication"}).str, "connected_slaves:0"); }));

  if (!off) {
    try {
      lock.try_lock_for(1s);
      ADD_FAILURE() << "locked on a master whose replica is cut off";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), errc::replica_sync_failed) << error.what();
    }
    EXPECT_FALSE(master.exists("cut-off"));
    return;
  }
  lock.lock();
  EXPECT_TRUE(master.exists("cut-off"));
  EXPECT_FALSE(replica.exists("cut-off"));
  Event lost;
  std::error_code cause;
  auto subscription = lock.subscribe_lost([&](const LockLost& event) {
    cause = event.cause;
    lost.set();
  });
  group.node(0).kill();
  group.wait_for_master(1, 20s);
  ASSERT_TRUE(lost.wait_for(10s)) << "the promoted replica had the hold";
  EXPECT_EQ(cause, errc::lease_expired);
  EXPECT_FALSE(lock.is_held());
}

INSTANTIATE_TEST_SUITE_P(Modes, ReplicaSyncFailover,
                         ::testing::Values(replica_sync_mode::off, replica_sync_mode::at_least_one),
                         [](const auto& info) {
                           return info.param == replica_sync_mode::off ? std::string("off") : std::string("on");
                         });

}  // namespace
}  // namespace warden::test
