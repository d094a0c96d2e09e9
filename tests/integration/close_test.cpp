// Client::close: every hold this Client's owners still have is released at
// once (not left for its lease), waiters elsewhere wake, and the Client is
// shut down afterwards; the destructor alone leaves holds to their lease.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>

#include <warden/warden.hpp>

#include "redis_probe.hpp"
#include "redis_server.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

using steady = std::chrono::steady_clock;

TEST(Close, ReleasesEveryHoldOfEveryKindAtOnceAndAnotherClientTakesThem) {
  RedisServer server;
  RedisProbe probe(server);
  Client a(fast_config(server));
  Client b(fast_config(server));

  Lock lock = a.get_lock("c-lock");
  lock.lock();
  lock.lock();  // re-entrant: two levels
  Lock leased = a.get_lock("c-leased");
  leased.lock(lock_options().with_lease(60s));  // a fixed lease: not the watchdog's
  FairLock fair = a.get_fair_lock("c-fair");
  fair.lock();
  FencedLock fenced = a.get_fenced_lock("c-fenced");
  EXPECT_EQ(fenced.lock_and_get_token(), 1);
  SpinLock spin = a.get_spin_lock("c-spin");
  spin.lock();
  ReadWriteLock readers = a.get_read_write_lock("c-read");
  readers.read_lock().lock();
  ReadWriteLock writers = a.get_read_write_lock("c-write");
  writers.write_lock().lock();
  // A hold of another owner of the same client, whose thread has ended.
  std::thread([&] { a.get_lock("c-other-owner").lock(); }).join();

  const std::vector<std::string> names = {"c-lock", "c-leased", "c-fair",  "c-fenced",
                                          "c-spin", "c-read",   "c-write", "c-other-owner"};
  for (const auto& name : names) ASSERT_TRUE(probe.exists(name)) << name;
  ASSERT_FALSE(probe.keys("*rwlock_timeout*").empty());

  auto started = steady::now();
  EXPECT_TRUE(a.close(5s));
  EXPECT_LT(elapsed_ms(started), 1'000);
  // Gone when close() returns, not at the end of a lease.
  for (const auto& name : names) EXPECT_FALSE(probe.exists(name)) << name;
  EXPECT_TRUE(probe.keys("*rwlock_timeout*").empty());
  EXPECT_EQ(probe.get("redisson_lock_token:{c-fenced}"), "1") << "the fencing counter is no hold: it stays";

  // Another client takes every one of them without waiting.
  EXPECT_TRUE(b.get_lock("c-lock").try_lock());
  EXPECT_TRUE(b.get_lock("c-leased").try_lock());
  EXPECT_TRUE(b.get_fair_lock("c-fair").try_lock());
  EXPECT_TRUE(b.get_fenced_lock("c-fenced").try_lock());
  EXPECT_TRUE(b.get_spin_lock("c-spin").try_lock());
  EXPECT_TRUE(b.get_read_write_lock("c-read").write_lock().try_lock());
  EXPECT_TRUE(b.get_read_write_lock("c-write").write_lock().try_lock());
  EXPECT_TRUE(b.get_lock("c-other-owner").try_lock());
}

TEST(Close, AWaiterOfAnotherClientIsWokenAtOnce) {
  RedisServer server;
  RedisProbe probe(server);
  Client a(fast_config(server));
  Client b(fast_config(server));
  Lock held = a.get_lock("c-awaited");
  held.lock();
  Event took;
  std::thread waiter([&] {
    Lock lock = b.get_lock("c-awaited");
    lock.lock();
    took.set();
    lock.unlock();
  });
  // b found it taken and waits on its channel.
  ASSERT_TRUE(eventually([&] { return subscribers(probe, "redisson_lock__channel:{c-awaited}") > 0; }));
  EXPECT_TRUE(a.close(5s));
  // The release's unlock message wakes it, far sooner than the 30 s lease.
  EXPECT_TRUE(took.wait_for(1s));
  waiter.join();
}

TEST(Close, FailsTheClientsOwnWaitersWithShutDownAndTouchesNoOtherHold) {
  RedisServer server;
  RedisProbe probe(server);
  Client a(fast_config(server));
  Client b(fast_config(server));
  Lock theirs = b.get_lock("c-theirs");
  theirs.lock();
  std::promise<std::error_code> outcome;
  std::thread waiter([&] {
    try {
      a.get_lock("c-theirs").lock();
      outcome.set_value({});
    } catch (const Error& error) {
      outcome.set_value(error.code());
    }
  });
  ASSERT_TRUE(eventually([&] { return subscribers(probe, "redisson_lock__channel:{c-theirs}") > 0; }));
  EXPECT_TRUE(a.close(5s)) << "a held nothing";
  auto future = outcome.get_future();
  ASSERT_EQ(future.wait_for(1s), std::future_status::ready);
  EXPECT_EQ(future.get(), errc::shut_down);
  waiter.join();
  EXPECT_TRUE(theirs.is_held());
  theirs.unlock();
}

TEST(Close, LaterCallsFailWithShutDownAndASecondCloseDoesNothing) {
  RedisServer server;
  RedisProbe probe(server);
  Client client(fast_config(server));
  Lock lock = client.get_lock("c-after");
  EXPECT_TRUE(client.close());
  auto expect_shut_down = [](const std::function<void()>& call, const char* what) {
    try {
      call();
      ADD_FAILURE() << what << " succeeded after close()";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), errc::shut_down) << what << ": " << error.what();
    }
  };
  expect_shut_down([&] { lock.try_lock(); }, "try_lock()");
  expect_shut_down([&] { client.get_fair_lock("c-after-fair").lock(); }, "a new handle's lock()");
  expect_shut_down([&] { client.wait_until_connected(1s); }, "wait_until_connected()");
  EXPECT_TRUE(client.close(1s));
  EXPECT_FALSE(probe.exists("c-after"));
}

TEST(Close, AServerThatDoesNotAnswerMakesItReturnFalseAtItsTimeout) {
  RedisServer server;
  Log log;
  Config config = fast_config(server);
  log.watch(config);
  Client client(config);
  Lock lock = client.get_lock("c-unanswered");
  lock.lock();
  server.pause();
  auto started = steady::now();
  EXPECT_FALSE(client.close(300ms));
  EXPECT_GE(elapsed_ms(started), 250);
  EXPECT_LT(elapsed_ms(started), 1'000);
  // The release that got no answer is logged, naming the lock.
  EXPECT_TRUE(log.contains("lock 'c-unanswered'")) << log.all();
  EXPECT_TRUE(log.contains("(closing the client)")) << log.all();
  // (The release may still run once the server reads it: nothing is said
  // here about the key.)
  server.resume();
}

TEST(Close, TheDestructorAloneLeavesHoldsToTheirLease) {
  RedisServer server;
  RedisProbe probe(server);
  {
    Client client(fast_config(server));
    client.get_lock("c-destroyed").lock();
  }
  EXPECT_TRUE(probe.exists("c-destroyed"));
  EXPECT_GT(probe.pttl("c-destroyed"), 20'000);
}

}  // namespace
}  // namespace warden::test
