// Locks on a master watched by Redis Sentinel (a master, one replica and
// three sentinels the fixture starts): every kind, a sentinel-driven
// failover and the master's death with holders and waiters, the old master
// kept alive after the switch, and bad configurations.
#include <gtest/gtest.h>

#include <warden/warden.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <iostream>
#include <mutex>
#include <string>
#include <vector>

#include "redis_probe.hpp"
#include "redis_sentinel.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

using steady = std::chrono::steady_clock;

Config sentinel_config(const RedisSentinelGroup& group) { return fast_sentinel_config(group.url()); }

TEST(Sentinel, EveryLockKindWorksOnTheMasterTheSentinelsName) {
  RedisSentinelGroup group;
  Client client(sentinel_config(group));
  RedisProbe master(group.node(0));
  Lock lock = client.get_lock("s-lock");
  lock.lock();
  EXPECT_TRUE(master.exists("s-lock"));
  lock.unlock();
  FairLock fair = client.get_fair_lock("s-fair");
  fair.lock();
  EXPECT_TRUE(master.exists("s-fair"));
  fair.unlock();
  FencedLock fenced = client.get_fenced_lock("s-fenced");
  EXPECT_EQ(fenced.lock_and_get_token(), 1);
  fenced.unlock();
  SpinLock spin = client.get_spin_lock("s-spin");
  spin.lock();
  spin.unlock();
  ReadWriteLock rw = client.get_read_write_lock("s-rw");
  rw.read_lock().lock();
  EXPECT_EQ(master.hgetall("s-rw").at("mode"), "read");
  rw.read_lock().unlock();
  EXPECT_FALSE(master.exists("s-rw"));
  // Nothing went to the replica or the sentinels but reads.
  RedisProbe replica(group.node(1));
  EXPECT_FALSE(replica.command({"EXISTS", "s-lock"}).integer);
}

RedisSentinelOptions with_replicas(std::size_t replicas) {
  RedisSentinelOptions options;
  options.replicas = replicas;
  return options;
}

// The data node the sentinels promote after `old` stopped being master,
// once it is master by every running sentinel's word and its own.
std::size_t new_master(RedisSentinelGroup& group, std::size_t old) {
  int index = -1;
  if (!eventually(
          [&] {
            index = group.master_index();
            return index >= 0 && static_cast<std::size_t>(index) != old;
          },
          20s)) {
    throw std::runtime_error("no replica was promoted within 20 s");
  }
  group.wait_for_master(static_cast<std::size_t>(index), 20s);
  return static_cast<std::size_t>(index);
}

// A holder and a waiter through a failover. `kill`: the master is killed
// (kill -9) after its replica acknowledged the hold; else the sentinels are
// asked to fail over (SENTINEL FAILOVER). Returns the milliseconds from the
// failover's start until the waiter held the lock.
long long hold_and_wait_through_failover(bool kill) {
  // Two replicas: the lock writes wait for one (replica_sync's default), and
  // the promoted replica has the other at once, while the old master would
  // take the sentinels ~10 s to turn into a replica.
  RedisSentinelGroup group(with_replicas(2));
  Config config = sentinel_config(group);
  config.lock_watchdog_timeout = 9s;  // longer than a failover takes here
  config.command_timeout = 10s;       // a release sent at the failover waits for it
  Client holder(config);
  Client waiter(config);
  Lock held = holder.get_lock("failing-over");
  std::atomic<int> lost{0};
  auto subscription = held.subscribe_lost([&](const LockLost&) { ++lost; });
  held.lock();
  RedisProbe master(group.node(0));
  EXPECT_EQ(master.command({"WAIT", "2", "2000"}).integer, 2);
  auto got = std::async(std::launch::async, [&] {
    Lock lock = waiter.get_lock("failing-over");
    if (!lock.try_lock_for(60s)) return false;
    lock.unlock();
    return true;
  });
  EXPECT_TRUE(eventually([&] { return subscribers(master, "redisson_lock__channel:{failing-over}") == 1; }));

  auto started = steady::now();
  if (kill) {
    group.node(0).kill();
  } else {
    RedisProbe(group.sentinel(0)).command({"SENTINEL", "FAILOVER", group.master_name()});
    // The hold lives on, renewed on the promoted replica.
    RedisProbe promoted(group.node(new_master(group, 0)));
    EXPECT_TRUE(eventually([&] { return promoted.pttl("failing-over") > 8'000; }, 8s));
  }
  // Released now: after a kill, the release waits for the new master (its
  // command time covers the failover) and wakes the waiter there.
  EXPECT_FALSE(held.unlock_checked());
  EXPECT_TRUE(got.get());
  auto took = elapsed_ms(started);
  EXPECT_EQ(lost.load(), 0);
  new_master(group, 0);
  return took;
}

TEST(Sentinel, ASentinelFailoverKeepsTheHoldAndWakesTheWaiterOnTheNewMaster) {
  auto took = hold_and_wait_through_failover(false);
  std::cout << "sentinel: SENTINEL FAILOVER to the waiter holding the lock: " << took << " ms\n";
}

TEST(Sentinel, AMasterKilledWithItsHoldReplicatedFailsOverAndTheWaiterGetsTheLock) {
  auto took = hold_and_wait_through_failover(true);
  std::cout << "sentinel: kill -9 of the master to the waiter holding the lock: " << took << " ms\n";
}

// One replica: after SENTINEL FAILOVER the promoted replica has none until
// the sentinels turn the old master into one (some seconds), and replica
// acknowledgement refuses acquires unsent meanwhile. A refusal did not run:
// a waiter in lock() waits on through it, as does a bounded one within its
// wait, and both get the lock once the holder let go and the new master has
// its replica.
TEST(Sentinel, WaitersKeepWaitingThroughAFailoverThatLeavesTheNewMasterWithoutReplicas) {
  RedisSentinelGroup group;  // one replica
  Config config = sentinel_config(group);
  Log log;
  log.watch(config);
  Client holder(config);
  Config waiters_config = sentinel_config(group);
  std::mutex mutex;
  int refused_or_unacknowledged = 0;
  std::vector<std::error_code> outcomes;
  waiters_config.observer.on_acquire = [&](const AcquireEvent& event) {
    std::lock_guard<std::mutex> guard(mutex);
    refused_or_unacknowledged += event.replica_sync_misses;
    outcomes.push_back(event.error);
  };
  Client waiters(waiters_config);
  Lock held = holder.get_lock("one-replica");
  held.lock();
  RedisProbe master(group.node(0));
  auto wait_in = [&](bool bounded) {
    return std::async(std::launch::async, [&waiters, bounded] {
      Lock lock = waiters.get_lock("one-replica");
      if (bounded) {
        if (!lock.try_lock_for(60s)) return false;
      } else {
        lock.lock();
      }
      lock.unlock();
      return true;
    });
  };
  auto unbounded = wait_in(false);
  auto bounded = wait_in(true);
  // Both found the lock held and wait for its release.
  ASSERT_TRUE(eventually([&] { return subscribers(master, "redisson_lock__channel:{one-replica}") >= 1; }));

  RedisProbe(group.sentinel(0)).command({"SENTINEL", "FAILOVER", group.master_name()});
  auto promoted_index = new_master(group, 0);
  EXPECT_TRUE(eventually([&] { return log.contains("the sentinels switched"); }, 10s)) << log.all();
  // The new master has no replica yet: the holder lets go now, and the
  // waiters' tries are refused until the old master attaches to it.
  RedisProbe promoted(group.node(promoted_index));
  EXPECT_FALSE(held.unlock_checked());
  EXPECT_FALSE(promoted.exists("one-replica"));
  auto started = steady::now();
  ASSERT_EQ(unbounded.wait_for(30s), std::future_status::ready);
  ASSERT_EQ(bounded.wait_for(30s), std::future_status::ready);
  // Neither threw replica_sync_failed: both waited and took the lock.
  EXPECT_TRUE(unbounded.get());
  EXPECT_TRUE(bounded.get());
  std::cout << "sentinel: release on a new master without replicas to both waiters holding the lock: "
            << elapsed_ms(started) << " ms\n";
  std::lock_guard<std::mutex> guard(mutex);
  EXPECT_GT(refused_or_unacknowledged, 0) << "the waiters never met the new master short of replicas";
  for (auto& error : outcomes) EXPECT_FALSE(error) << error.message();
  EXPECT_FALSE(promoted.exists("one-replica"));
}

TEST(Sentinel, TheOldMasterKeptAliveAfterTheSwitchGetsNoLockWrites) {
  RedisSentinelGroup group(with_replicas(2));
  Config config = sentinel_config(group);
  Log log;
  log.watch(config);
  Client client(config);
  Lock lock = client.get_lock("after-switch");
  lock.lock();
  lock.unlock();
  // The master stops answering (a partition); the sentinels promote a
  // replica. Then it comes back, still believing it is the master until the
  // sentinels reconfigure it. (A write sent before the Client has heard of
  // the switch would still go there: nothing can prevent that, and WAIT
  // then takes it back. So the master comes back once the Client has
  // followed the switch.)
  group.node(0).pause();
  auto promoted_index = new_master(group, 0);
  EXPECT_TRUE(eventually([&] { return log.contains("the sentinels switched"); }));
  group.node(0).resume();
  RedisProbe old_master(group.node(0));
  auto before = old_master.script_calls();
  // A bounded wait: the promoted replica may not have its own replica back
  // yet, and replica acknowledgement refuses locks until it has.
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(lock.try_lock_for(10s));
    lock.unlock();
  }
  EXPECT_EQ(old_master.script_calls(), before) << "lock writes reached the old master";
  RedisProbe promoted(group.node(promoted_index));
  EXPECT_GE(promoted.script_calls(), 10);
}

TEST(Sentinel, AMasterDemotedBehindTheSentinelsBacksIsLeftAtItsFirstReadonly) {
  RedisSentinelGroup group;
  Config config = sentinel_config(group);
  Log log;
  log.watch(config);
  Client client(config);
  Lock lock = client.get_lock("demoted");
  lock.lock();
  lock.unlock();
  // Out of the sentinels' sight, the master becomes a replica: writes to it
  // are answered READONLY, while the sentinels still name it.
  RedisProbe old_master(group.node(0));
  RedisProbe other(group.node(1));
  ASSERT_FALSE(other.command({"REPLICAOF", "NO", "ONE"}).is_error());
  ASSERT_FALSE(old_master.command({"REPLICAOF", "127.0.0.1", std::to_string(group.node(1).port())}).is_error());
  auto before = old_master.script_calls();
  // The acquire meets READONLY: warden lets go of that server at once and
  // asks the sentinels again. They name it still, and ROLE says it is no
  // master, so nothing more is sent there: the call fails by its deadline
  // with the reason, having written nothing.
  auto started = steady::now();
  try {
    lock.try_lock_for(0s);
    ADD_FAILURE() << "locked on a demoted master";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::routing_failed) << error.what();
    EXPECT_NE(std::string(error.what()).find("ROLE says slave"), std::string::npos) << error.what();
  }
  EXPECT_LT(elapsed_ms(started), 2'000 + 1'000);
  EXPECT_EQ(old_master.script_calls(), before + 1) << "more than the one write that met READONLY";
  EXPECT_FALSE(other.exists("demoted"));
  EXPECT_TRUE(log.contains("answered READONLY: it is no master any more")) << log.all();
}

TEST(SentinelBadInput, AnUnknownMasterNameFailsWithRoutingFailedNamingIt) {
  RedisSentinelOptions options = with_replicas(0);
  options.sentinels = 1;
  RedisSentinelGroup group(options);
  Config config = sentinel_config(group);
  config.sentinel.master_name = "no-such-master";
  Client client(config);
  auto started = steady::now();
  try {
    client.get_lock("unknown-master").lock();
    ADD_FAILURE() << "locked through a master nobody knows";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::routing_failed) << error.what();
    EXPECT_NE(std::string(error.what()).find("no-such-master"), std::string::npos) << error.what();
  }
  EXPECT_LT(elapsed_ms(started), 1'500) << "every sentinel answered: no reason to wait";
}

TEST(SentinelBadInput, WaitUntilConnectedAnswersForTheMasterAndNamesAnUnknownOne) {
  RedisSentinelOptions options = with_replicas(0);
  options.sentinels = 1;
  RedisSentinelGroup group(options);
  Client client(sentinel_config(group));
  client.wait_until_connected(5s);
  auto clients = RedisProbe(group.node(0)).command({"CLIENT", "LIST"}).str;
  EXPECT_NE(clients.find("name=warden:" + client.id()), std::string::npos)
      << "not connected to the master: " << clients;
  Config config = sentinel_config(group);
  config.sentinel.master_name = "no-such-master";
  Client lost(config);
  auto started = steady::now();
  try {
    lost.wait_until_connected(5s);
    ADD_FAILURE() << "ready for a master nobody knows";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::routing_failed) << error.what();
    EXPECT_NE(std::string(error.what()).find("no-such-master"), std::string::npos) << error.what();
  }
  EXPECT_LT(elapsed_ms(started), 1'500) << "every sentinel answered: no reason to wait";
}

TEST(SentinelBadInput, NoSentinelReachableFailsWithConnectionRefusedByTheDeadline) {
  RedisServer stand_in;
  auto port = stand_in.port();
  stand_in.stop();  // nobody listens there now
  Config config = Config::from_url("redis+sentinel://127.0.0.1:" + std::to_string(port) + "/m");
  config.connect_timeout = 200ms;
  config.command_timeout = 1s;
  Client client(config);
  auto started = steady::now();
  try {
    client.get_lock("no-sentinel").lock();
    ADD_FAILURE() << "locked without a sentinel";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::connection_refused) << error.what();
  }
  EXPECT_LT(elapsed_ms(started), 3'000);
}

TEST(SentinelBadInput, AWrongSentinelPasswordFailsWithAuthenticationFailed) {
  RedisSentinelOptions options;
  options.replicas = 0;
  options.sentinels = 1;
  options.quorum = 1;
  options.sentinel_password = "sentinel-secret";
  RedisSentinelGroup group(options);
  Config config = sentinel_config(group);
  config.replica_sync.mode = replica_sync_mode::off;  // a master without replicas
  config.sentinel.password = "s3cr3t-typo";
  config.command_timeout = 1s;
  Client client(config);
  try {
    client.get_lock("wrong-password").lock();
    ADD_FAILURE() << "locked with a wrong sentinel password";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::authentication_failed) << error.what();
    EXPECT_EQ(std::string(error.what()).find("s3cr3t-typo"), std::string::npos)
        << "the password leaked: " << error.what();
  }
  // The right one works; the master itself has no password.
  config.sentinel.password = "sentinel-secret";
  Client right(config);
  Lock lock = right.get_lock("right-password");
  lock.lock();
  lock.unlock();
}

TEST(SentinelConfig, URLsNameTheSentinelsAndTheMaster) {
  auto config = Config::from_url("redis+sentinel://:p%40ss@127.0.0.1:26379,[::1]:26380,sentinel-3/orders/2");
  ASSERT_EQ(config.sentinel.sentinels.size(), 3u);
  EXPECT_EQ(config.sentinel.sentinels[0].port, 26379);
  EXPECT_EQ(config.sentinel.sentinels[1].host, "::1");
  EXPECT_EQ(config.sentinel.sentinels[2].host, "sentinel-3");
  EXPECT_EQ(config.sentinel.sentinels[2].port, 26379);
  EXPECT_EQ(config.sentinel.master_name, "orders");
  EXPECT_EQ(config.database, 2);
  EXPECT_EQ(config.password, "p@ss");  // the master's
  EXPECT_TRUE(config.sentinel.password.empty());
  EXPECT_TRUE(Config::from_url("rediss+sentinel://h/m").tls.enabled);
  for (const char* bad :
       {"redis+sentinel://h:26379", "redis+sentinel://h:26379/", "redis+sentinel://h:0/m", "redis+sentinel://h/m/x"}) {
    try {
      Config::from_url(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), errc::invalid_argument) << bad;
    }
  }
  Config no_name;
  no_name.sentinel.sentinels = {endpoint{"127.0.0.1", 26379}};
  try {
    no_name.validate();
    ADD_FAILURE() << "a sentinel config without a master name was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("sentinel.master_name"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace warden::test
