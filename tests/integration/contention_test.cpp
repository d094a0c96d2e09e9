// Mutual exclusion across processes and threads, and the pub/sub wake-up.
#include <gtest/gtest.h>

#include "child_process.hpp"
#include "redis_probe.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

TEST(Contention, ThreeProcessesTimesFourThreadsLoseNoUpdate) {
  RedisServer server;
  RedisProbe probe(server);
  constexpr int processes = 3, threads = 4, iterations = 50;
  std::vector<std::unique_ptr<ChildProcess>> children;
  for (int p = 0; p < processes; ++p) {
    children.push_back(std::make_unique<ChildProcess>(
        WARDEN_TEST_WORKER, std::vector<std::string>{"counter", server.url(), "counter-lock", "counter",
                                                     std::to_string(threads), std::to_string(iterations)}));
  }
  for (auto& child : children) {
    int code = -1;
    ASSERT_TRUE(child->wait_for(120s, &code)) << "worker hung";
    EXPECT_EQ(code, 0);
  }
  EXPECT_EQ(probe.get("counter"), std::to_string(processes * threads * iterations));
  EXPECT_FALSE(probe.exists("counter-lock"));
}

TEST(Contention, ThreadsOfOneClientExcludeEachOther) {
  RedisServer server;
  Client client{fast_config(server)};
  Lock lock = client.get_lock("in-process");
  std::atomic<int> inside{0};
  std::atomic<int> violations{0};
  long long total = 0;  // guarded by the lock itself
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) {
        std::lock_guard<Lock> guard(lock);
        if (inside.fetch_add(1) != 0) ++violations;
        ++total;
        inside.fetch_sub(1);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(violations.load(), 0);
  EXPECT_EQ(total, 800);
}

TEST(Contention, AWaiterIsWokenByTheReleaseNotByTheLease) {
  RedisServer server;
  Client holder_client{fast_config(server)};
  Client waiter_client{fast_config(server)};
  Lock held = holder_client.get_lock("wake");
  Lock wanted = waiter_client.get_lock("wake");
  held.lock(lock_options().with_lease(30s));  // a 30 s lease: only the unlock message can explain a fast take-over

  Event waiting;
  std::chrono::steady_clock::time_point acquired_at;
  std::thread waiter([&] {
    waiting.set();
    wanted.lock();
    acquired_at = std::chrono::steady_clock::now();
    wanted.unlock();
  });
  ASSERT_TRUE(waiting.wait_for(2s));
  // The waiter found the lock taken once it subscribed to the unlock channel.
  RedisProbe probe(server);
  ASSERT_TRUE(eventually([&] { return subscribers(probe, "redisson_lock__channel:{wake}") == 1; }));
  auto released_at = std::chrono::steady_clock::now();
  held.unlock();
  waiter.join();
  auto takeover = std::chrono::duration_cast<std::chrono::milliseconds>(acquired_at - released_at);
  EXPECT_LT(takeover.count(), 1'000) << "woken after " << takeover.count() << " ms";
}

TEST(Contention, TryLockForTimesOutWithinItsWait) {
  RedisServer server;
  Client a{fast_config(server)};
  Client b{fast_config(server)};
  a.get_lock("busy").lock();
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(b.get_lock("busy").try_lock_for(300ms));
  auto waited = elapsed_ms(start);
  EXPECT_GE(waited, 300);
  EXPECT_LT(waited, 300 + 1'000);  // at most one command time-out past the wait
}

}  // namespace
}  // namespace warden::test
