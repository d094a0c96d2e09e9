// MultiLock: all or nothing over members of one or several servers.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "child_process.hpp"
#include "redis_probe.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

std::string owner_field(const Client& client, thread_id owner = current_thread_id()) {
  return client.id() + ":" + std::to_string(owner);
}

TEST(MultiLock, TakesEveryMemberAndUnlockRemovesEveryKey) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  MultiLock multi{client.get_lock("m:a"), client.get_lock("m:b"), client.get_lock("m:c")};
  EXPECT_FALSE(multi.is_locked());
  EXPECT_EQ(multi.valid_until(), std::chrono::steady_clock::time_point{});

  multi.lock();
  for (auto key : {"m:a", "m:b", "m:c"}) {
    EXPECT_EQ(probe.hgetall(key), (std::map<std::string, std::string>{{owner_field(client), "1"}})) << key;
  }
  EXPECT_TRUE(multi.is_locked());
  EXPECT_GT(multi.valid_until(), std::chrono::steady_clock::now());

  multi.unlock();
  EXPECT_EQ(probe.keys("m:*"), std::vector<std::string>{});
  EXPECT_FALSE(multi.is_locked());
  EXPECT_EQ(multi.valid_until(), std::chrono::steady_clock::time_point{});
}

TEST(MultiLock, IsReentrantPerMember) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  Lock a = client.get_lock("r:a");
  MultiLock multi{a, client.get_lock("r:b")};
  a.lock();  // a member already held on its own is simply re-entered
  multi.lock();
  multi.lock();
  EXPECT_EQ(probe.hgetall("r:a").at(owner_field(client)), "3");
  EXPECT_EQ(probe.hgetall("r:b").at(owner_field(client)), "2");
  multi.unlock();
  EXPECT_EQ(probe.hgetall("r:a").at(owner_field(client)), "2");
  EXPECT_EQ(probe.hgetall("r:b").at(owner_field(client)), "1");
  multi.unlock();
  EXPECT_EQ(probe.hgetall("r:a").at(owner_field(client)), "1");
  EXPECT_FALSE(probe.exists("r:b"));
  a.unlock();
  EXPECT_FALSE(probe.exists("r:a"));
}

TEST(MultiLock, ExcludesOtherClientsAndKeepsNothingWhenOneMemberIsTaken) {
  RedisServer server;
  RedisProbe probe(server);
  Client first{fast_config(server)};
  Client second{fast_config(server)};
  MultiLock held{first.get_lock("x:a"), first.get_lock("x:b")};
  MultiLock wanted{second.get_lock("x:b"), second.get_lock("x:c")};
  held.lock();

  EXPECT_FALSE(wanted.try_lock());
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(wanted.try_lock_for(300ms));
  auto waited = elapsed_ms(start);
  EXPECT_GE(waited, 300);
  EXPECT_LT(waited, 300 + 1'000);
  EXPECT_FALSE(probe.exists("x:c")) << "a failed attempt kept a member";
  EXPECT_EQ(probe.hgetall("x:b"), (std::map<std::string, std::string>{{owner_field(first), "1"}}));

  // Released while the other one waits: it takes both, woken rather than polling late.
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    got = wanted.try_lock_for(5s);
    if (got) wanted.unlock();
  });
  ASSERT_TRUE(eventually([&] {
    auto reply = probe.command({"PUBSUB", "NUMSUB", "redisson_lock__channel:{x:b}"});
    return reply.elements.size() == 2 && reply.elements[1].integer >= 1;
  }));
  held.unlock();
  waiter.join();
  EXPECT_TRUE(got.load());
  EXPECT_EQ(probe.keys("x:*"), std::vector<std::string>{});
}

TEST(MultiLock, MembersAreAskedInParallel) {
  RedisServer slow;
  RedisServer fast;
  RedisProbe fast_probe(fast);
  Client slow_client{fast_config(slow)};
  Client fast_client{fast_config(fast)};
  MultiLock multi{slow_client.get_lock("p:slow"), fast_client.get_lock("p:fast")};
  ASSERT_FALSE(multi.is_locked());  // both connections are up

  slow.pause();
  auto pending = multi.try_lock_async(current_thread_id(), lock_options().with_wait(3s));
  // The first member's server answers nothing, yet the second member is asked.
  bool asked = eventually([&] { return fast_probe.exists("p:fast"); }, 800ms);
  slow.resume();
  EXPECT_TRUE(asked) << "the second member waited for the first";
  EXPECT_TRUE(pending.get());
  multi.unlock();
  EXPECT_FALSE(fast_probe.exists("p:fast"));
}

TEST(MultiLock, MembersOnSeveralServersAndAFixedLeaseForAll) {
  RedisServer s1;
  RedisServer s2;
  RedisProbe p1(s1);
  RedisProbe p2(s2);
  Client c1{fast_config(s1)};
  Client c2{fast_config(s2)};
  MultiLock multi{c1.get_lock("lease:a"), c2.get_lock("lease:b")};
  auto before = std::chrono::steady_clock::now();
  ASSERT_TRUE(multi.try_lock(lock_options().with_wait(1s).with_lease(1'500ms)));
  // Taken with a longer lease while the attempt ran, then all given the caller's.
  for (auto* probe : {&p1, &p2}) {
    auto key = probe == &p1 ? "lease:a" : "lease:b";
    long long ttl = probe->pttl(key);
    EXPECT_GT(ttl, 1'000) << key;
    EXPECT_LE(ttl, 1'500) << key;
  }
  auto valid = multi.valid_until();
  EXPECT_GT(valid, before + 1'000ms);
  EXPECT_LE(valid, std::chrono::steady_clock::now() + 1'500ms);
  multi.unlock();
  EXPECT_FALSE(p1.exists("lease:a"));
  EXPECT_FALSE(p2.exists("lease:b"));
}

TEST(MultiLock, TheWatchdogRenewsEveryMember) {
  RedisServer server;
  RedisProbe probe(server);
  Config config = fast_config(server);
  config.lock_watchdog_timeout = 300ms;
  Client client{config};
  MultiLock multi{client.get_lock("w:a"), client.get_lock("w:b")};
  Event lost;
  auto listening = multi.subscribe_lost([&](const LockLost&) { lost.set(); });
  multi.lock();
  auto start = std::chrono::steady_clock::now();
  // Time is the subject: hold for three whole leases.
  while (elapsed_ms(start) < 900) {
    std::this_thread::sleep_for(50ms);
    ASSERT_TRUE(probe.exists("w:a") && probe.exists("w:b")) << "expired after " << elapsed_ms(start) << " ms";
  }
  EXPECT_GT(multi.valid_until(), std::chrono::steady_clock::now());
  EXPECT_FALSE(lost.is_set());
  multi.unlock();
  EXPECT_EQ(probe.keys("w:*"), std::vector<std::string>{});
}

TEST(MultiLock, ALostMemberFiresTheCallbackOnce) {
  RedisServer server;
  RedisProbe probe(server);
  Config config = fast_config(server);
  config.lock_watchdog_timeout = 300ms;
  Client client{config};
  MultiLock multi{client.get_lock("l:a"), client.get_lock("l:b")};
  std::mutex mutex;
  std::vector<LockLost> seen;
  Event lost;
  auto listening = multi.subscribe_lost([&](const LockLost& event) {
    std::lock_guard<std::mutex> guard(mutex);
    seen.push_back(event);
    lost.set();
  });
  multi.lock();
  probe.command({"DEL", "l:b"});
  ASSERT_TRUE(lost.wait_for(3s));
  EXPECT_LE(multi.valid_until(), std::chrono::steady_clock::now());
  probe.command({"DEL", "l:a"});  // a second loss of the same hold is not reported again
  Lock member_a = client.get_lock("l:a");
  ASSERT_TRUE(eventually([&] { return member_a.valid_until() == std::chrono::steady_clock::time_point{}; }, 2s));
  {
    std::lock_guard<std::mutex> guard(mutex);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].lock_name, "l:b");
    EXPECT_EQ(seen[0].owner, current_thread_id());
    EXPECT_EQ(seen[0].cause, errc::lease_expired);
    EXPECT_NE(seen[0].message.find("multi-lock"), std::string::npos) << seen[0].message;
  }
  EXPECT_EQ(multi.unlock_checked(), errc::lease_expired) << "unlocking a lost hold must report it";
}

TEST(MultiLock, AMemberOnADeadServerFailsWithinTheWaitAndReleasesTheOthers) {
  RedisServer live;
  RedisServer dead;
  RedisProbe probe(live);
  Config dead_config = fast_config(dead);
  Client live_client{fast_config(live)};
  Client dead_client{dead_config};
  MultiLock multi{live_client.get_lock("d:a"), dead_client.get_lock("d:b"), live_client.get_lock("d:c")};
  dead.kill();
  auto start = std::chrono::steady_clock::now();
  try {
    multi.try_lock_for(2s);
    FAIL() << "a member on a dead server must fail the MultiLock";
  } catch (const Error& error) {
    EXPECT_TRUE(error.code() == errc::connection_refused || error.code() == errc::connection_lost ||
                error.code() == errc::timed_out)
        << error.what();
    EXPECT_NE(std::string(error.what()).find("'d:b' on 127.0.0.1:" + std::to_string(dead.port())), std::string::npos)
        << error.what();
  }
  EXPECT_LT(elapsed_ms(start), 2'000);
  EXPECT_EQ(probe.keys("d:*"), std::vector<std::string>{}) << "the members taken were not released";
}

TEST(MultiLock, UnlockReleasesEveryMemberAndReportsEveryFailure) {
  RedisServer s1;
  RedisServer s2;
  RedisProbe p1(s1);
  Client c1{fast_config(s1)};
  Client c2{fast_config(s2)};
  MultiLock multi{c1.get_lock("u:a"), c2.get_lock("u:b"), c1.get_lock("u:c")};
  multi.lock();
  p1.command({"DEL", "u:a"});  // its lease "ran out"
  s2.kill();                   // unreachable
  try {
    multi.unlock_async(current_thread_id()).get();
    FAIL() << "unlock must report the failed members";
  } catch (const Error& error) {
    std::string what = error.what();
    EXPECT_EQ(error.code(), errc::lease_expired) << what;  // the first failing member's cause
    EXPECT_NE(what.find("'u:a' on"), std::string::npos) << what;
    EXPECT_NE(what.find("'u:b' on 127.0.0.1:" + std::to_string(s2.port())), std::string::npos) << what;
    EXPECT_EQ(what.find("'u:c' on 127.0.0.1:" + std::to_string(s1.port()) + ":"), std::string::npos) << what;
  }
  EXPECT_FALSE(p1.exists("u:c")) << "a member was not released because another failed";
}

TEST(MultiLock, BadInputIsRefusedAndChangesNothing) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  try {
    MultiLock empty{std::vector<Lock>{}};
    FAIL() << "an empty MultiLock must be refused";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::invalid_argument);
  }
  MultiLock multi{client.get_lock("b:a"), client.get_lock("b:b")};
  long long scripts = probe.command_calls("evalsha") + probe.command_calls("eval");
  auto expect_code = [](errc code, auto&& call) {
    try {
      call();
      ADD_FAILURE() << "must throw";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), code) << error.what();
    }
  };
  expect_code(errc::not_owner, [&] { multi.unlock_async(current_thread_id()).get(); });
  expect_code(errc::invalid_argument, [&] { multi.try_lock_for(-1ms); });
  expect_code(errc::invalid_argument, [&] { multi.lock(lock_options().with_lease(0ms)); });
  expect_code(errc::invalid_argument, [&] { multi.try_lock(lock_options().with_wait(1s).with_lease(-5ms)); });
  expect_code(errc::invalid_argument, [&] { multi.try_lock_async(0).get(); });
  EXPECT_EQ(probe.command_calls("evalsha") + probe.command_calls("eval"), scripts);
  EXPECT_EQ(probe.keys("*"), std::vector<std::string>{});
}

TEST(MultiLock, WorksWithStandardGuards) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  MultiLock first{client.get_lock("g:a"), client.get_lock("g:b")};
  MultiLock second{client.get_lock("g:c")};
  Lock plain = client.get_lock("g:d");
  {
    std::scoped_lock guard(first, second, plain);
    EXPECT_EQ(probe.keys("g:*"), (std::vector<std::string>{"g:a", "g:b", "g:c", "g:d"}));
  }
  EXPECT_EQ(probe.keys("g:*"), std::vector<std::string>{});
  {
    std::unique_lock<MultiLock> guard(first, 500ms);
    EXPECT_TRUE(guard.owns_lock());
  }
  EXPECT_EQ(probe.keys("g:*"), std::vector<std::string>{});
}

TEST(MultiLock, AsyncTwinsTakeAnExplicitOwner) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  MultiLock multi{client.get_lock("as:a"), client.get_lock("as:b")};
  constexpr thread_id owner = 4242;
  multi.lock_async(owner).get();
  EXPECT_EQ(probe.hgetall("as:a").count(owner_field(client, owner)), 1u);
  EXPECT_GT(multi.valid_until(owner), std::chrono::steady_clock::now());
  EXPECT_EQ(multi.valid_until(), std::chrono::steady_clock::time_point{});  // not the calling thread's
  std::thread other([&] { multi.unlock_async(owner).get(); });              // released from another thread
  other.join();
  EXPECT_EQ(probe.keys("as:*"), std::vector<std::string>{});
}

TEST(MultiLock, BlockingCallOnAnIOThreadFailsInsteadOfDeadlocking) {
  RedisServer server;
  RedisProbe probe(server);
  Config config = fast_config(server);
  config.lock_watchdog_timeout = 300ms;
  Client client{config};
  MultiLock multi{client.get_lock("io:a"), client.get_lock("io:b")};
  Lock watched = client.get_lock("io:watched");
  Event done;
  std::error_code seen;
  auto listening = watched.subscribe_lost([&](const LockLost&) {
    try {
      multi.try_lock();  // runs on the I/O thread
    } catch (const Error& error) {
      seen = error.code();
    }
    done.set();
  });
  watched.lock();
  probe.command({"DEL", "io:watched"});
  ASSERT_TRUE(done.wait_for(3s));
  EXPECT_EQ(seen, errc::would_deadlock);
  EXPECT_EQ(probe.keys("io:*"), std::vector<std::string>{});
}

// Two threads each take their MultiLock `rounds` times over members named
// in opposite orders; an overlap inside is a violation.
struct CrossedOutcome {
  int finished = 0;
  int violations = 0;
};
CrossedOutcome take_crossed(MultiLock& ab, MultiLock& ba, int rounds) {
  std::atomic<int> inside{0};
  std::atomic<int> violations{0};
  std::atomic<int> finished{0};
  auto loop = [&](MultiLock& multi) {
    for (int i = 0; i < rounds; ++i) {
      std::lock_guard<MultiLock> guard(multi);
      if (inside.fetch_add(1) != 0) ++violations;
      std::this_thread::yield();
      inside.fetch_sub(1);
    }
    ++finished;
  };
  std::thread t1([&] { loop(ab); });
  std::thread t2([&] { loop(ba); });
  t1.join();
  t2.join();
  return {finished.load(), violations.load()};
}

TEST(MultiLock, CrossedOrdersInOneProcessBothMakeProgress) {
  // The members live on two servers, so either caller may get its first
  // member while the other gets its own first: the crossed case.
  RedisServer s1;
  RedisServer s2;
  Client first_a{fast_config(s1)}, first_b{fast_config(s2)};
  Client second_a{fast_config(s1)}, second_b{fast_config(s2)};
  MultiLock ab{first_a.get_lock("cross:a"), first_b.get_lock("cross:b")};
  MultiLock ba{second_b.get_lock("cross:b"), second_a.get_lock("cross:a")};
  auto start = std::chrono::steady_clock::now();
  auto outcome = take_crossed(ab, ba, 200);
  EXPECT_EQ(outcome.finished, 2);
  EXPECT_EQ(outcome.violations, 0);
  EXPECT_LT(elapsed_ms(start), 15'000);
}

TEST(MultiLock, CrossedOrdersOverFairLocksBothMakeProgress) {
  // Fair members keep their queue places between attempts: the caller whose
  // attempt ends first lets its member go to the other, queued at its head.
  RedisServer s1;
  RedisServer s2;
  Client first_a{fast_config(s1)}, first_b{fast_config(s2)};
  Client second_a{fast_config(s1)}, second_b{fast_config(s2)};
  MultiLock ab{first_a.get_fair_lock("cross:a"), first_b.get_fair_lock("cross:b")};
  MultiLock ba{second_b.get_fair_lock("cross:b"), second_a.get_fair_lock("cross:a")};
  auto start = std::chrono::steady_clock::now();
  auto outcome = take_crossed(ab, ba, 100);
  EXPECT_EQ(outcome.finished, 2);
  EXPECT_EQ(outcome.violations, 0);
  EXPECT_LT(elapsed_ms(start), 30'000);
  // Nobody is left queued.
  RedisProbe p1(s1), p2(s2);
  EXPECT_TRUE(p1.keys("redisson_lock_*").empty());
  EXPECT_TRUE(p2.keys("redisson_lock_*").empty());
}

TEST(MultiLock, CrossedOrdersFromTwoProcessesBothMakeProgress) {
  RedisServer s1;
  RedisServer s2;
  RedisProbe p1(s1);
  RedisProbe p2(s2);
  constexpr int iterations = 200;
  auto start = std::chrono::steady_clock::now();
  ChildProcess forward(WARDEN_TEST_WORKER,
                       {"multi-crossed", s1.url(), s2.url(), "ab", "two", std::to_string(iterations)});
  ChildProcess backward(WARDEN_TEST_WORKER,
                        {"multi-crossed", s1.url(), s2.url(), "ba", "two", std::to_string(iterations)});
  int code = -1;
  ASSERT_TRUE(forward.wait_for(30s, &code)) << "a worker made no progress";
  EXPECT_EQ(code, 0);
  ASSERT_TRUE(backward.wait_for(30s, &code)) << "a worker made no progress";
  EXPECT_EQ(code, 0);
  // Each worker counted under the MultiLock; an overlap would lose an update.
  EXPECT_EQ(p1.get("two:counter"), std::to_string(2 * iterations));
  EXPECT_EQ(p1.get("two:violations"), std::nullopt);
  EXPECT_FALSE(p1.exists("two:a"));
  EXPECT_FALSE(p2.exists("two:b"));
  EXPECT_LT(elapsed_ms(start), 30'000);
}

}  // namespace
}  // namespace warden::test
