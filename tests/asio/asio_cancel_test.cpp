// <warden/asio.hpp>: per-operation cancellation through the handler's
// cancellation slot (a timer racing the wait with awaitable_operators ||, a
// cancellation_signal emitting terminal or partial) ends the wait with
// errc::cancelled and leaves no hold, queue place or subscription.
#include <gtest/gtest.h>

#include <asio/bind_cancellation_slot.hpp>
#include <asio/bind_executor.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <asio/strand.hpp>

#include <string>
#include <variant>

#include "asio_env.hpp"
#include "redis_probe.hpp"

namespace warden::test {
namespace {

using namespace asio::experimental::awaitable_operators;

TEST(AsioCancel, ATimerWinningTheRaceLeavesNoQueuePlaceOrSubscription) {
  RedisServer server;
  RedisProbe probe(server);
  Client holder_client{fast_config(server)};
  Client client{fast_config(server)};
  FairLock held = holder_client.get_fair_lock("c:fair");
  held.lock();
  FairLock lock = client.get_fair_lock("c:fair");
  Runner runner(2);
  auto started = std::chrono::steady_clock::now();
  // A strand: the timer's and the wait's completions never run at once.
  auto done = asio::co_spawn(
      asio::make_strand(runner.context),
      [&]() -> asio::awaitable<std::size_t> {
        task_owner me;
        asio::steady_timer timer(co_await asio::this_coro::executor, 300ms);
        auto winner = co_await (async_lock(lock, me, asio::use_awaitable) || timer.async_wait(asio::use_awaitable));
        co_return winner.index();
      },
      asio::use_future);
  EXPECT_EQ(get_within(done), 1u);  // the timer
  EXPECT_LT(elapsed_ms(started), 1500);
  EXPECT_TRUE(eventually([&] { return subscribers(probe, "redisson_lock__channel:{c:fair}") == 0; }));
  EXPECT_TRUE(eventually([&] { return !probe.exists("redisson_lock_queue:{c:fair}"); }));
  EXPECT_FALSE(probe.exists("redisson_lock_timeout:{c:fair}"));
  held.unlock();
  EXPECT_FALSE(probe.exists("c:fair"));  // the cancelled waiter took nothing
}

TEST(AsioCancel, TheLockWinningTheRaceIsHeldAndTheTimerCancelled) {
  RedisServer server;
  Client client{fast_config(server)};
  Lock lock = client.get_lock("c:won");
  Runner runner(2);
  task_owner me;
  auto done = asio::co_spawn(
      asio::make_strand(runner.context),
      [&]() -> asio::awaitable<std::size_t> {
        asio::steady_timer timer(co_await asio::this_coro::executor, 5s);
        auto winner = co_await (async_lock(lock, me, asio::use_awaitable) || timer.async_wait(asio::use_awaitable));
        co_return winner.index();
      },
      asio::use_future);
  EXPECT_EQ(get_within(done), 0u);
  EXPECT_TRUE(lock.is_held(me));
  lock.unlock_async(me).get();
}

// A waiting Lock cancelled by a signal of the given type.
void cancel_by_signal(asio::cancellation_type type) {
  RedisServer server;
  RedisProbe probe(server);
  Client holder_client{fast_config(server)};
  Client client{fast_config(server)};
  Lock held = holder_client.get_lock("c:signal");
  held.lock();
  Lock lock = client.get_lock("c:signal");
  Runner runner(1);
  asio::cancellation_signal signal;
  std::promise<std::error_code> outcome;
  task_owner me;
  asio::post(runner.context, [&] {
    async_lock(lock, me,
               asio::bind_cancellation_slot(signal.slot(), asio::bind_executor(runner.context, [&](std::error_code e) {
                                              outcome.set_value(e);
                                            })));
  });
  bool waiting_seen = eventually([&] { return subscribers(probe, "redisson_lock__channel:{c:signal}") == 1; });
  auto cancelled_at = std::chrono::steady_clock::now();
  asio::post(runner.context, [&] { signal.emit(type); });  // the signal is emitted where the op was started
  ASSERT_TRUE(waiting_seen);
  auto future = outcome.get_future();
  EXPECT_EQ(get_within(future), errc::cancelled);
  EXPECT_LT(elapsed_ms(cancelled_at), 500);
  EXPECT_FALSE(lock.is_held(me));
  EXPECT_TRUE(eventually([&] { return subscribers(probe, "redisson_lock__channel:{c:signal}") == 0; }));
  held.unlock();
  EXPECT_FALSE(probe.exists("c:signal"));
}

TEST(AsioCancel, ATerminalSignalEndsTheWait) { cancel_by_signal(asio::cancellation_type::terminal); }
TEST(AsioCancel, APartialSignalEndsTheWait) { cancel_by_signal(asio::cancellation_type::partial); }

// Cancellation emitted right after the start races the acquire of a free
// lock: either the handler is told of a hold (and it is held) or of the
// cancellation (and nothing is held, nothing is left in Redis).
TEST(AsioCancel, AHoldTakenAfterCancellationIsGivenBack) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  Lock lock = client.get_lock("c:race");
  Runner runner(1);
  int cancelled = 0;
  int held = 0;
  for (int round = 0; round < 40; ++round) {
    asio::cancellation_signal signal;
    std::promise<std::error_code> outcome;
    std::promise<void> emitted;  // the round's signal lives until its emit ran
    task_owner me;
    asio::post(runner.context, [&] {
      async_lock(
          lock, me,
          asio::bind_cancellation_slot(
              signal.slot(), asio::bind_executor(runner.context, [&](std::error_code e) { outcome.set_value(e); })));
      if (round % 2 == 0) {
        signal.emit(asio::cancellation_type::terminal);
        emitted.set_value();
      } else {
        // One turn later: the attempt is in flight.
        asio::post(runner.context, [&] {
          signal.emit(asio::cancellation_type::terminal);
          emitted.set_value();
        });
      }
    });
    auto future = outcome.get_future();
    std::error_code error = get_within(future);
    emitted.get_future().wait();
    if (error) {
      EXPECT_EQ(error, errc::cancelled);
      ++cancelled;
      // An attempt in flight when the cancellation came is taken back by
      // warden's core right after it answers (in the owner's lane), so the
      // key may still be there for a moment.
      EXPECT_TRUE(eventually([&] { return !probe.exists("c:race"); })) << "round " << round;
      EXPECT_EQ(lock.hold_count(me), 0);
    } else {
      ++held;
      EXPECT_TRUE(lock.is_held(me));
      lock.unlock_async(me).get();
    }
  }
  EXPECT_GT(cancelled, 0);
  EXPECT_EQ(left_behind(probe), std::vector<std::string>{});
}

}  // namespace
}  // namespace warden::test
