// Leases and the watchdog: fixed leases expire, watchdog leases live as long
// as their holder, renewals stop at unlock, and a lost hold is reported.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "redis_probe.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

TEST(Lease, FixedLeaseExpiresByItselfAndUnlockThenFailsTyped) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  Lock lock = client.get_lock("short");
  Event lost;
  std::error_code cause;
  auto listening = lock.subscribe_lost([&](const LockLost& event) {
    cause = event.cause;
    lost.set();
  });

  auto taken = std::chrono::steady_clock::now();
  lock.lock(lock_options().with_lease(200ms));
  EXPECT_TRUE(probe.exists("short"));
  EXPECT_LE(lock.valid_until(), taken + 200ms + 50ms);
  // The lease runs out on the server and the holder is told.
  ASSERT_TRUE(lost.wait_for(2s));
  EXPECT_EQ(cause, errc::lease_expired);
  EXPECT_TRUE(eventually([&] { return !probe.exists("short"); }, 1s));

  try {
    lock.unlock_async(current_thread_id()).get();
    FAIL() << "unlock after the lease expired must fail";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::lease_expired);
    EXPECT_NE(std::string(error.what()).find("short"), std::string::npos) << error.what();
  }
  // The local record is gone too: a second unlock is plainly "not owner".
  EXPECT_EQ(lock.unlock_checked(), errc::not_owner);
}

TEST(Lease, WatchdogKeepsAHeldLockAliveAndStopsAtUnlock) {
  RedisServer server;
  RedisProbe probe(server);
  Config config = fast_config(server);
  config.lock_watchdog_timeout = 300ms;
  Client client{config};
  Lock lock = client.get_lock("renewed");
  Event lost;
  auto listening = lock.subscribe_lost([&](const LockLost&) { lost.set(); });

  lock.lock();
  auto start = std::chrono::steady_clock::now();
  // Time is the subject here: hold for five whole leases.
  while (elapsed_ms(start) < 1'500) {
    std::this_thread::sleep_for(50ms);
    ASSERT_TRUE(probe.exists("renewed")) << "expired after " << elapsed_ms(start) << " ms";
    long long ttl = probe.pttl("renewed");
    EXPECT_GT(ttl, 0);
    EXPECT_LE(ttl, 300);
  }
  EXPECT_TRUE(lock.is_held());
  EXPECT_GT(lock.valid_until(), std::chrono::steady_clock::now());
  EXPECT_FALSE(lost.is_set());

  lock.unlock();
  EXPECT_FALSE(probe.exists("renewed"));
  long long after_unlock = probe.command_calls("evalsha") + probe.command_calls("eval");
  // Three more renewal periods: not one more script reaches the server.
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(probe.command_calls("evalsha") + probe.command_calls("eval"), after_unlock);
  EXPECT_FALSE(probe.exists("renewed"));
  EXPECT_FALSE(lost.is_set());
}

TEST(Lease, WatchdogRenewsManyHoldsInOneScriptCall) {
  RedisServer server;
  RedisProbe probe(server);
  Config config = fast_config(server);
  config.lock_watchdog_timeout = 600ms;
  Client client{config};
  std::vector<Lock> locks;
  for (int i = 0; i < 150; ++i) locks.push_back(client.get_lock("many:" + std::to_string(i)));
  for (auto& lock : locks) lock.lock();
  long long before = probe.command_calls("evalsha") + probe.command_calls("eval");
  // One renewal period (200 ms) and a bit: every lease renewed...
  std::this_thread::sleep_for(450ms);
  long long calls = probe.command_calls("evalsha") + probe.command_calls("eval") - before;
  for (int i = 0; i < 150; ++i) ASSERT_TRUE(probe.exists("many:" + std::to_string(i)));
  // ... by batches of up to 100 holds: at most 2 calls per tick, 2 ticks at most.
  EXPECT_GE(calls, 2);
  EXPECT_LE(calls, 6) << "renewal is not batched";
  for (auto& lock : locks) lock.unlock();
}

// Config::lock_watchdog_batch_size: 50 holds at 10 per call are 5 calls a
// period, spread over it as the holds were taken (here all at once).
TEST(Lease, TheRenewalBatchSizeIsConfigurable) {
  RedisServer server;
  RedisProbe probe(server);
  Config config = fast_config(server);
  config.lock_watchdog_timeout = 600ms;
  config.lock_watchdog_batch_size = 10;
  Client client{config};
  std::vector<Lock> locks;
  for (int i = 0; i < 50; ++i) locks.push_back(client.get_lock("batch:" + std::to_string(i)));
  for (auto& lock : locks) lock.lock();
  long long before = probe.script_calls();
  // Two renewal periods (200 ms each) and a bit.
  std::this_thread::sleep_for(500ms);
  long long calls = probe.script_calls() - before;
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(probe.exists("batch:" + std::to_string(i)));
  EXPECT_GE(calls, 10) << "batches larger than lock_watchdog_batch_size";
  EXPECT_LE(calls, 20);
  for (auto& lock : locks) lock.unlock();
}

// Holds taken in a burst fall due in a burst: the watchdog keeps at most 2
// renewal calls unanswered per server (others' commands would queue at the
// server behind every one of them), and still renews every hold. The cap
// widens only for renewals a quarter of a period late (RenewalPacing); the
// lease leaves a sanitizer build 200 ms for 100 calls before that.
TEST(Lease, RenewalCallsInFlightPerServerAreCapped) {
  RedisServer server;
  RedisProbe probe(server);
  Config config = fast_config(server);
  config.lock_watchdog_timeout = 2400ms;
  config.lock_watchdog_batch_size = 1;  // one call per hold: 100 due together
  std::atomic<int> in_flight{0}, most{0}, renewed{0}, lost{0};
  config.observer.on_renewal = [&](const RenewalEvent& e) {
    if (e.phase == renewal_phase::sent) {
      int now = ++in_flight;
      int seen = most.load();
      while (now > seen && !most.compare_exchange_weak(seen, now)) {
      }
    } else {
      --in_flight;
      renewed += static_cast<int>(e.renewed);
    }
  };
  config.observer.on_hold_lost = [&](const HoldLostEvent&) { ++lost; };
  Client client{config};
  const thread_id owner = new_owner_id();
  std::vector<Lock> locks;
  std::vector<AcquireFuture<void>> taken;
  for (int i = 0; i < 100; ++i) locks.push_back(client.get_lock("burst:" + std::to_string(i)));
  for (auto& lock : locks) taken.push_back(lock.lock_async(owner));
  for (auto& future : taken) future.get();
  // Three renewal periods (800 ms each) and a bit.
  std::this_thread::sleep_for(2600ms);
  EXPECT_GE(renewed.load(), 200) << "every hold renewed in each period";
  EXPECT_LE(most.load(), 2) << "renewal calls unanswered at once";
  EXPECT_EQ(lost.load(), 0);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(probe.exists("burst:" + std::to_string(i)));
  for (auto& lock : locks) lock.unlock_async(owner).get();
}

// Holds of several owners and kinds in one renewal call: the call sends an
// owner's field once for a run of its holds, and each hold is still judged
// on its own (a deleted key is that hold's loss only).
TEST(Lease, ARenewalCallWithManyOwnersJudgesEachHold) {
  RedisServer server;
  RedisProbe probe(server);
  Config config = fast_config(server);
  config.lock_watchdog_timeout = 300ms;
  Client client{config};
  const thread_id one = new_owner_id();
  const thread_id two = new_owner_id();
  Lock a = client.get_lock("owners:a");
  Lock b = client.get_lock("owners:b");
  Lock c = client.get_lock("owners:c");
  Lock d = client.get_lock("owners:d");
  ReadWriteLock rw = client.get_read_write_lock("owners:rw");
  ReadWriteLock rw2 = client.get_read_write_lock("owners:rw2");
  Lock read = rw.read_lock();
  Lock write = rw2.write_lock();
  std::atomic<int> lost_c{0};
  std::atomic<int> lost_other{0};
  auto listening = c.subscribe_lost([&](const LockLost&) { ++lost_c; });
  std::vector<LostSubscription> listening_others;
  for (Lock* other : {&a, &b, &d, &read, &write}) {
    listening_others.push_back(other->subscribe_lost([&](const LockLost&) { ++lost_other; }));
  }
  a.lock_async(one).get();
  b.lock_async(one).get();
  c.lock_async(two).get();
  d.lock_async(one).get();
  read.lock_async(one).get();   // field "<owner>"
  write.lock_async(one).get();  // field "<owner>:write", same owner
  const std::vector<std::string> names{"owners:a", "owners:b", "owners:d", "owners:rw", "owners:rw2"};
  // Time is the subject: five leases, every key kept.
  auto start = std::chrono::steady_clock::now();
  while (elapsed_ms(start) < 1'500) {
    std::this_thread::sleep_for(50ms);
    for (auto& name : names) ASSERT_TRUE(probe.exists(name)) << name << " expired after " << elapsed_ms(start) << " ms";
    ASSERT_TRUE(probe.exists("owners:c"));
  }
  // The middle hold's key goes: its hold alone is lost.
  probe.command({"DEL", "owners:c"});
  ASSERT_TRUE(eventually([&] { return lost_c.load() == 1; }, 2s));
  std::this_thread::sleep_for(400ms);
  EXPECT_EQ(lost_other.load(), 0);
  for (auto& name : names) EXPECT_TRUE(probe.exists(name)) << name;
  for (auto [lock, owner] : {std::pair{&a, one}, {&b, one}, {&d, one}, {&read, one}, {&write, one}}) {
    lock->unlock_async(owner).get();
  }
}

TEST(Lease, DeletingTheKeyFiresTheLostLockCallback) {
  RedisServer server;
  RedisProbe probe(server);
  Config config = fast_config(server);
  config.lock_watchdog_timeout = 300ms;
  Client client{config};
  Lock lock = client.get_lock("stolen");
  Event lost;
  LockLost seen;
  std::mutex mutex;
  auto listening = lock.subscribe_lost([&](const LockLost& event) {
    std::lock_guard<std::mutex> guard(mutex);
    seen = event;
    lost.set();
  });
  lock.lock();
  probe.command({"DEL", "stolen"});
  ASSERT_TRUE(lost.wait_for(2s)) << "no lost-lock callback";
  std::lock_guard<std::mutex> guard(mutex);
  EXPECT_EQ(seen.lock_name, "stolen");
  EXPECT_EQ(seen.owner, current_thread_id());
  EXPECT_EQ(seen.cause, errc::lease_expired);
  EXPECT_NE(seen.message.find("stolen"), std::string::npos);
  EXPECT_LE(lock.valid_until(), std::chrono::steady_clock::now());
}

TEST(Lease, NoConfirmedRenewalForAWholeLeaseIsALoss) {
  RedisServer server;
  Config config = fast_config(server);
  config.lock_watchdog_timeout = 300ms;
  config.command_timeout = 2s;  // longer than the lease: the loss must not wait for it
  Client client{config};
  Lock lock = client.get_lock("unconfirmed");
  Event lost;
  std::error_code cause;
  auto listening = lock.subscribe_lost([&](const LockLost& event) {
    cause = event.cause;
    lost.set();
  });
  lock.lock();
  auto valid_until = lock.valid_until();
  server.pause();  // renewals go unanswered
  ASSERT_TRUE(lost.wait_for(3s));
  auto declared = std::chrono::steady_clock::now();
  server.resume();
  EXPECT_TRUE(cause == errc::timed_out || cause == errc::connection_lost) << cause.message();
  // Declared lost once the lease ran out (a renewal period of slack), not
  // only when the command deadline passed.
  EXPECT_GE(declared, valid_until - 150ms);
  EXPECT_LT(declared, valid_until + 1s);
}

TEST(Lease, AnotherOwnerTakingTheKeyIsALoss) {
  RedisServer server;
  RedisProbe probe(server);
  Config config = fast_config(server);
  config.lock_watchdog_timeout = 300ms;
  Client client{config};
  Lock lock = client.get_lock("hijacked");
  Event lost;
  auto listening = lock.subscribe_lost([&](const LockLost&) { lost.set(); });
  lock.lock();
  probe.command({"DEL", "hijacked"});
  probe.command({"HSET", "hijacked", "someone-else:1", "1"});
  ASSERT_TRUE(lost.wait_for(2s));
  EXPECT_EQ(probe.hgetall("hijacked"), (std::map<std::string, std::string>{{"someone-else:1", "1"}}));
}

}  // namespace
}  // namespace warden::test
