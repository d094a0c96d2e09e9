// 1,000 coroutines on an io_context run by 2 threads contend for 10 locks:
// exclusion holds, no thread blocks in warden (a heartbeat on the same
// context keeps ticking), every lock is released, nothing is left in Redis.
#include <gtest/gtest.h>

#include <asio/steady_timer.hpp>

#include <array>
#include <atomic>
#include <string>

#include "asio_env.hpp"
#include "redis_probe.hpp"

namespace warden::test {
namespace {

TEST(AsioContention, AThousandCoroutinesTwoThreadsTenLocks) {
  constexpr int coroutines = 1000;
  constexpr int locks = 10;
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  std::vector<Lock> handles;
  for (int i = 0; i < locks; ++i) handles.push_back(client.get_lock("contended:" + std::to_string(i)));
  std::array<std::atomic<int>, locks> inside{};
  std::atomic<int> overlaps{0};
  std::atomic<int> finished{0};
  std::atomic<int> failures{0};
  Runner runner(2);

  // The heartbeat: ticks every 5 ms on the same threads; a thread blocked in
  // warden would show as a long gap.
  std::atomic<bool> stop{false};
  std::atomic<long long> longest_gap_ms{0};
  auto heartbeat = runner.spawn([&]() -> asio::awaitable<void> {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    auto last = std::chrono::steady_clock::now();
    while (!stop) {
      timer.expires_after(5ms);
      co_await timer.async_wait(asio::use_awaitable);
      auto now = std::chrono::steady_clock::now();
      long long gap = std::chrono::duration_cast<std::chrono::milliseconds>(now - last).count();
      if (gap > longest_gap_ms) longest_gap_ms = gap;
      last = now;
    }
  });

  std::vector<std::future<void>> tasks;
  for (int n = 0; n < coroutines; ++n) {
    tasks.push_back(runner.spawn([&, n]() -> asio::awaitable<void> {
      Lock lock = handles[static_cast<std::size_t>(n % locks)];
      auto& count = inside[static_cast<std::size_t>(n % locks)];
      task_owner me;
      try {
        co_await async_lock(lock, me, asio::use_awaitable);
        if (count.fetch_add(1) != 0) ++overlaps;
        // Hold across a suspension, so other coroutines run meanwhile.
        asio::steady_timer pause(co_await asio::this_coro::executor, 1ms);
        co_await pause.async_wait(asio::use_awaitable);
        count.fetch_sub(1);
        co_await async_unlock(lock, me, asio::use_awaitable);
      } catch (const std::exception&) {
        ++failures;
      }
      ++finished;
    }));
  }
  auto started = std::chrono::steady_clock::now();
  for (auto& task : tasks) get_within(task, 120s);
  auto took = elapsed_ms(started);
  stop = true;
  get_within(heartbeat);

  EXPECT_EQ(finished, coroutines);
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(overlaps, 0);
  EXPECT_LT(longest_gap_ms, 500) << "a thread of the context was blocked";
  for (auto& lock : handles) EXPECT_FALSE(lock.is_locked());
  EXPECT_EQ(left_behind(probe), std::vector<std::string>{});
  for (int i = 0; i < locks; ++i) {
    EXPECT_EQ(subscribers(probe, "redisson_lock__channel:{contended:" + std::to_string(i) + "}"), 0);
  }
  RecordProperty("took_ms", std::to_string(took));
  RecordProperty("longest_gap_ms", std::to_string(longest_gap_ms.load()));
}

}  // namespace
}  // namespace warden::test
