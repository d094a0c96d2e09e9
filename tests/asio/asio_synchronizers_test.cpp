// <warden/asio.hpp> for the synchronizers (Semaphore, PermitExpirableSemaphore,
// CountDownLatch): every waiting and releasing operation with each kind of
// completion token (use_awaitable, use_future, a callback, deferred);
// cancellation by a timer racing the wait leaves no permit taken and no
// subscription; contention of many coroutines on two threads.
#include <gtest/gtest.h>

#include <asio/bind_cancellation_slot.hpp>
#include <asio/bind_executor.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/experimental/deferred.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <asio/strand.hpp>

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "asio_env.hpp"
#include "redis_probe.hpp"

namespace warden::test {
namespace {

using namespace asio::experimental::awaitable_operators;

// left_behind(), less the semaphores' own short-lived keys
// (warden_acquire_cancel:..., warden_release_latch:..., docs/semaphores.md),
// which must have a TTL.
template <class Probe>
std::vector<std::string> kept(Probe& probe) {
  std::vector<std::string> out;
  for (auto& key : left_behind(probe)) {
    bool own = key.rfind("warden_acquire_cancel:", 0) == 0 || key.rfind("warden_release_latch:", 0) == 0;
    if (!own || probe.pttl(key) <= 0) out.push_back(key);
  }
  return out;
}

// ---- every token

TEST(AsioSynchronizers, SemaphoreWithEveryToken) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  Runner runner(2);
  Semaphore sem = client.get_semaphore("as:sem");

  // use_awaitable: every operation, on the coroutine's threads.
  auto done = runner.spawn([&]() -> asio::awaitable<void> {
    EXPECT_TRUE(co_await async_try_set_permits(sem, 3, asio::use_awaitable));
    EXPECT_FALSE(co_await async_try_set_permits(sem, 5, asio::use_awaitable));  // it has a count
    co_await async_acquire(sem, 2, asio::use_awaitable);
    EXPECT_TRUE(runner.is_worker());
    EXPECT_EQ(co_await async_available_permits(sem, asio::use_awaitable), 1);
    EXPECT_FALSE(co_await async_try_acquire(sem, 2, lock_options(), asio::use_awaitable));  // one try
    EXPECT_FALSE(co_await async_try_acquire(sem, 2, lock_options().with_wait(50ms), asio::use_awaitable));
    EXPECT_TRUE(co_await async_try_acquire(sem, 1, lock_options().with_wait(1s), asio::use_awaitable));
    co_await async_release(sem, 3, asio::use_awaitable);
    co_await async_add_permits(sem, 2, asio::use_awaitable);
    EXPECT_EQ(co_await async_drain_permits(sem, asio::use_awaitable), 5);
    EXPECT_EQ(co_await async_available_permits(sem, asio::use_awaitable), 0);
    co_await async_add_permits(sem, 3, asio::use_awaitable);
    EXPECT_TRUE(co_await async_release_if_exists(sem, 1, asio::use_awaitable));
    EXPECT_EQ(co_await async_drain_permits(sem, asio::use_awaitable), 4);
    co_await async_add_permits(sem, 3, asio::use_awaitable);
  });
  get_within(done);
  EXPECT_EQ(probe.get("as:sem"), "3");

  // use_future.
  std::future<void> taken = async_acquire(sem, 3, lock_options(), asio::use_future);
  get_within(taken);
  std::future<std::int64_t> left = async_available_permits(sem, asio::use_future);
  EXPECT_EQ(get_within(left), 0);
  std::future<bool> none = async_try_acquire(sem, 1, lock_options(), asio::use_future);
  EXPECT_FALSE(get_within(none));

  // A callback bound to a strand runs there, where blocking calls are allowed.
  auto strand = asio::make_strand(runner.context);
  std::promise<std::pair<bool, std::error_code>> released;
  async_release(sem, 3, asio::bind_executor(strand, [&](std::error_code error) {
                  released.set_value({strand.running_in_this_thread() && sem.available_permits() == 3, error});
                }));
  auto released_future = released.get_future();
  auto [on_strand, error] = get_within(released_future);
  EXPECT_FALSE(error);
  EXPECT_TRUE(on_strand);

  // deferred: nothing is taken until the operation is started.
  auto op = async_acquire(sem, 2, asio::experimental::deferred);
  EXPECT_EQ(sem.available_permits(), 3);
  std::promise<std::error_code> acquired;
  std::move(op)(asio::bind_executor(runner.context, [&](std::error_code e) { acquired.set_value(e); }));
  auto acquired_future = acquired.get_future();
  EXPECT_FALSE(get_within(acquired_future));
  EXPECT_EQ(sem.available_permits(), 1);
  auto give = async_release(sem, 2, asio::experimental::deferred);
  std::future<void> given = std::move(give)(asio::use_future);
  get_within(given);
  EXPECT_EQ(probe.get("as:sem"), "3");
  EXPECT_EQ(kept(probe), std::vector<std::string>{"as:sem"});

  // release_if_exists leaves a missing semaphore missing.
  Semaphore missing = client.get_semaphore("as:missing");
  std::future<bool> not_there = async_release_if_exists(missing, 1, asio::use_future);
  EXPECT_FALSE(get_within(not_there));
  EXPECT_FALSE(probe.exists("as:missing"));
}

TEST(AsioSynchronizers, PermitExpirableSemaphoreWithEveryToken) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  Runner runner(2);
  PermitExpirableSemaphore sem = client.get_permit_expirable_semaphore("as:pes");

  auto done = runner.spawn([&]() -> asio::awaitable<void> {
    EXPECT_TRUE(co_await async_try_set_permits(sem, 2, asio::use_awaitable));
    std::string first = co_await async_acquire(sem, lock_options().with_lease(30s), asio::use_awaitable);
    EXPECT_EQ(first.size(), 32u);
    std::string second = co_await async_acquire(sem, asio::use_awaitable);  // watchdog-kept
    EXPECT_EQ(co_await async_acquired_permits(sem, asio::use_awaitable), 2);
    EXPECT_EQ(co_await async_available_permits(sem, asio::use_awaitable), 0);
    auto none = co_await async_try_acquire(sem, lock_options().with_wait(50ms), asio::use_awaitable);
    EXPECT_FALSE(none.has_value());
    EXPECT_TRUE(co_await async_update_lease_time(sem, first, 20s, asio::use_awaitable));
    auto left = co_await async_lease_time(sem, first, asio::use_awaitable);
    EXPECT_TRUE(left && *left > 15s && *left <= 20s);
    EXPECT_TRUE(co_await async_try_release(sem, second, asio::use_awaitable));
    EXPECT_FALSE(co_await async_try_release(sem, second, asio::use_awaitable));  // not held any more
    EXPECT_FALSE(co_await async_update_lease_time(sem, second, 20s, asio::use_awaitable));
    auto third = co_await async_try_acquire(sem, lock_options().with_wait(1s), asio::use_awaitable);
    EXPECT_TRUE(third.has_value());
    co_await async_release(sem, first, asio::use_awaitable);
    if (third) co_await async_release(sem, *third, asio::use_awaitable);
    co_await async_set_permits(sem, 3, asio::use_awaitable);
    EXPECT_EQ(co_await async_available_permits(sem, asio::use_awaitable), 3);
  });
  get_within(done);

  // use_future; a release of a permit not held is errc::not_owner.
  std::future<std::string> id = async_acquire(sem, lock_options(), asio::use_future);
  std::string taken = get_within(id);
  std::future<void> released = async_release(sem, taken, asio::use_future);
  get_within(released);
  std::future<void> again = async_release(sem, taken, asio::use_future);
  try {
    get_within(again);
    ADD_FAILURE() << "a second release succeeded";
  } catch (const std::system_error& error) {
    EXPECT_EQ(error.code(), errc::not_owner);
  }

  // A callback on a strand; deferred.
  auto strand = asio::make_strand(runner.context);
  std::promise<std::optional<std::string>> tried;
  async_try_acquire(sem, lock_options(), asio::bind_executor(strand, [&](std::error_code error, auto permit) {
                      EXPECT_FALSE(error);
                      EXPECT_TRUE(strand.running_in_this_thread());
                      tried.set_value(permit);
                    }));
  auto tried_future = tried.get_future();
  auto permit = get_within(tried_future);
  ASSERT_TRUE(permit.has_value());
  EXPECT_EQ(sem.acquired_permits(), 1);
  auto op = async_try_release(sem, *permit, asio::experimental::deferred);
  EXPECT_EQ(sem.acquired_permits(), 1);  // not started
  std::future<bool> dropped = std::move(op)(asio::use_future);
  EXPECT_TRUE(get_within(dropped));
  EXPECT_EQ(sem.available_permits(), 3);
  EXPECT_EQ(sem.acquired_permits(), 0);
  EXPECT_EQ(kept(probe), std::vector<std::string>{"as:pes"});
}

TEST(AsioSynchronizers, CountDownLatchWithEveryToken) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  Client waiter_client{fast_config(server)};
  Runner runner(2);
  CountDownLatch latch = client.get_count_down_latch("as:latch");
  CountDownLatch waited = waiter_client.get_count_down_latch("as:latch");

  auto set = runner.spawn([&]() -> asio::awaitable<void> {
    EXPECT_TRUE(co_await async_try_set_count(latch, 3, asio::use_awaitable));
    EXPECT_FALSE(co_await async_try_set_count(latch, 5, asio::use_awaitable));
    EXPECT_EQ(co_await async_count(latch, asio::use_awaitable), 3);
    EXPECT_FALSE(co_await async_wait_for(latch, 50ms, asio::use_awaitable));
  });
  get_within(set);

  // Waiters of every form, on another Client.
  std::future<void> by_future = async_wait(waited, asio::use_future);
  std::future<bool> for_future = async_wait_for(waited, 10s, asio::use_future);
  auto strand = asio::make_strand(runner.context);
  std::promise<std::int64_t> by_callback;
  async_wait(waited, asio::bind_executor(strand, [&](std::error_code error) {
               EXPECT_FALSE(error);
               by_callback.set_value(waited.count());  // a blocking call: not on the I/O thread
             }));
  auto by_coroutine =
      runner.spawn([&]() -> asio::awaitable<void> { co_await async_wait(waited, asio::use_awaitable); });
  // Two waits per form subscribe once per Client.
  ASSERT_TRUE(eventually([&] { return subscribers(probe, "redisson_countdownlatch__channel__{as:latch}") == 1; }));
  EXPECT_EQ(by_future.wait_for(50ms), std::future_status::timeout);

  std::future<void> down = async_count_down(latch, asio::use_future);
  get_within(down);
  std::promise<std::error_code> down_by_callback;
  async_count_down(
      latch, asio::bind_executor(runner.context, [&](std::error_code error) { down_by_callback.set_value(error); }));
  auto down_by_callback_future = down_by_callback.get_future();
  EXPECT_FALSE(get_within(down_by_callback_future));
  EXPECT_EQ(latch.count(), 1);
  EXPECT_EQ(by_future.wait_for(0ms), std::future_status::timeout);
  auto last = async_count_down(latch, asio::experimental::deferred);
  EXPECT_EQ(latch.count(), 1);  // not started
  std::future<void> opened = std::move(last)(asio::use_future);
  get_within(opened);

  get_within(by_future);
  EXPECT_TRUE(get_within(for_future));
  auto callback_future = by_callback.get_future();
  EXPECT_EQ(get_within(callback_future), 0);
  get_within(by_coroutine);
  std::future<std::int64_t> count = async_count(latch, asio::use_future);
  EXPECT_EQ(get_within(count), 0);
  EXPECT_TRUE(eventually([&] { return subscribers(probe, "redisson_countdownlatch__channel__{as:latch}") == 0; }));
  EXPECT_EQ(left_behind(probe), std::vector<std::string>{});
}

TEST(AsioSynchronizers, ErrorsArriveAsWardenErrorCodesAndChangeNothing) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  Runner runner(1);
  probe.command({"SET", "as:string", "not a count"});
  Semaphore wrong = client.get_semaphore("as:string");
  Semaphore sem = client.get_semaphore("as:bad");
  CountDownLatch latch = client.get_count_down_latch("as:string");
  auto done = runner.spawn([&]() -> asio::awaitable<void> {
    auto [zero] = co_await async_acquire(sem, 0, asio::experimental::as_tuple(asio::use_awaitable));
    EXPECT_EQ(zero, errc::invalid_argument);
    auto [typed] = co_await async_acquire(wrong, 1, asio::experimental::as_tuple(asio::use_awaitable));
    EXPECT_EQ(typed, errc::wrong_type);
    auto [count_error, count] = co_await async_count(latch, asio::experimental::as_tuple(asio::use_awaitable));
    EXPECT_EQ(count_error, errc::wrong_type);
    EXPECT_EQ(count, 0);
    try {
      co_await async_wait(latch, asio::use_awaitable);
      ADD_FAILURE() << "a latch wait on a string succeeded";
    } catch (const std::system_error& error) {
      EXPECT_EQ(error.code(), errc::wrong_type);
    }
  });
  get_within(done);
  EXPECT_EQ(probe.get("as:string"), "not a count");
  EXPECT_EQ(kept(probe), std::vector<std::string>{"as:string"});
}

// ---- cancellation

// Runs `wait` (an awaitable operation) against a 300 ms timer with ||, on a
// strand; returns the index of the winner.
template <class MakeWait>
std::size_t race_timer(Runner& runner, MakeWait make_wait) {
  auto done = asio::co_spawn(
      asio::make_strand(runner.context),
      [&]() -> asio::awaitable<std::size_t> {
        asio::steady_timer timer(co_await asio::this_coro::executor, 300ms);
        auto winner = co_await (make_wait() || timer.async_wait(asio::use_awaitable));
        co_return winner.index();
      },
      asio::use_future);
  return get_within(done);
}

TEST(AsioSynchronizersCancel, ATimerWinningASemaphoreAcquireLeavesNoPermitTakenAndNoSubscription) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  Semaphore sem = client.get_semaphore("ac:sem");
  ASSERT_TRUE(sem.try_set_permits(2));
  Runner runner(2);
  auto started = std::chrono::steady_clock::now();
  // Three permits of two: the wait cannot end but by cancellation.
  EXPECT_EQ(race_timer(runner, [&] { return async_acquire(sem, 3, asio::use_awaitable); }), 1u);
  EXPECT_LT(elapsed_ms(started), 1500);
  EXPECT_TRUE(eventually([&] { return subscribers(probe, "redisson_sc:{ac:sem}") == 0; }));
  EXPECT_EQ(sem.available_permits(), 2);
  // The cancelled waiter is gone: a release wakes nobody who takes permits.
  sem.release(1);
  EXPECT_EQ(sem.available_permits(), 3);
  EXPECT_EQ(kept(probe), std::vector<std::string>{"ac:sem"});
}

TEST(AsioSynchronizersCancel, ATimerWinningAPermitAcquireLeavesNoPermitTakenAndNoSubscription) {
  RedisServer server;
  RedisProbe probe(server);
  Client holder_client{fast_config(server)};
  Client client{fast_config(server)};
  PermitExpirableSemaphore held = holder_client.get_permit_expirable_semaphore("ac:pes");
  ASSERT_TRUE(held.try_set_permits(1));
  std::string holder = held.acquire();
  PermitExpirableSemaphore sem = client.get_permit_expirable_semaphore("ac:pes");
  Runner runner(2);
  auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(race_timer(runner, [&] { return async_acquire(sem, asio::use_awaitable); }), 1u);
  EXPECT_LT(elapsed_ms(started), 1500);
  EXPECT_TRUE(eventually([&] { return subscribers(probe, "redisson_sc:{ac:pes}") == 0; }));
  EXPECT_EQ(sem.acquired_permits(), 1);  // the holder's only
  held.release(holder);
  EXPECT_EQ(sem.available_permits(), 1);
  EXPECT_EQ(sem.acquired_permits(), 0);
  EXPECT_FALSE(probe.exists("{ac:pes}:timeout"));
  EXPECT_EQ(kept(probe), std::vector<std::string>{"ac:pes"});
}

TEST(AsioSynchronizersCancel, ATimerWinningALatchWaitLeavesNoSubscription) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  CountDownLatch latch = client.get_count_down_latch("ac:latch");
  ASSERT_TRUE(latch.try_set_count(1));
  Runner runner(2);
  auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(race_timer(runner, [&] { return async_wait(latch, asio::use_awaitable); }), 1u);
  EXPECT_EQ(race_timer(runner, [&] { return async_wait_for(latch, 10s, asio::use_awaitable); }), 1u);
  EXPECT_LT(elapsed_ms(started), 3000);
  EXPECT_TRUE(eventually([&] { return subscribers(probe, "redisson_countdownlatch__channel__{ac:latch}") == 0; }));
  EXPECT_EQ(latch.count(), 1);
  latch.count_down();
  EXPECT_EQ(left_behind(probe), std::vector<std::string>{});
}

// A cancellation emitted right after the start, or one turn later, races an
// acquire that can succeed at once: the handler hears of permits (and they
// are taken) or of the cancellation (and every permit is back).
// start(slot, context, report) begins the acquire with a handler bound to
// the slot and the context, which calls report(error, permit id).
using report_fn = std::function<void(std::error_code, std::string)>;
template <class Start, class Release, class Free>
void race_cancellation(Start start, Release release, Free free_permits, std::int64_t all) {
  Runner runner(1);
  int cancelled = 0;
  for (int round = 0; round < 40; ++round) {
    asio::cancellation_signal signal;
    std::promise<std::pair<std::error_code, std::string>> outcome;
    std::promise<void> emitted;  // the round's signal lives until its emit ran
    asio::post(runner.context, [&] {
      start(signal.slot(), runner.context, report_fn([&](std::error_code e, std::string id) {
              outcome.set_value({e, std::move(id)});
            }));
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
    auto [error, id] = get_within(future);
    emitted.get_future().wait();
    if (error) {
      EXPECT_EQ(error, errc::cancelled);
      ++cancelled;
      // An attempt in flight when the cancellation came is given back right
      // after it answers.
      EXPECT_TRUE(eventually([&] { return free_permits() == all; })) << "round " << round;
    } else {
      EXPECT_LT(free_permits(), all);
      release(id);
      EXPECT_EQ(free_permits(), all);
    }
  }
  EXPECT_GT(cancelled, 0);
}

TEST(AsioSynchronizersCancel, PermitsTakenAfterCancellationAreGivenBack) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  Semaphore sem = client.get_semaphore("ac:race");
  ASSERT_TRUE(sem.try_set_permits(2));
  race_cancellation(
      [&](asio::cancellation_slot slot, asio::io_context& context, report_fn report) {
        async_acquire(sem, 2,
                      asio::bind_cancellation_slot(slot, asio::bind_executor(context, [report](std::error_code e) {
                                                     report(e, std::string());
                                                   })));
      },
      [&](const std::string&) { sem.release(2); }, [&] { return sem.available_permits(); }, 2);
  EXPECT_EQ(kept(probe), std::vector<std::string>{"ac:race"});
}

TEST(AsioSynchronizersCancel, APermitTakenAfterCancellationIsReleased) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  PermitExpirableSemaphore sem = client.get_permit_expirable_semaphore("ac:pes-race");
  ASSERT_TRUE(sem.try_set_permits(1));
  race_cancellation(
      [&](asio::cancellation_slot slot, asio::io_context& context, report_fn report) {
        async_acquire(sem, asio::bind_cancellation_slot(
                               slot, asio::bind_executor(context, [report](std::error_code e, std::string id) {
                                 report(e, std::move(id));
                               })));
      },
      [&](const std::string& id) { sem.release(id); }, [&] { return sem.available_permits(); }, 1);
  EXPECT_EQ(sem.acquired_permits(), 0);
  EXPECT_EQ(kept(probe), std::vector<std::string>{"ac:pes-race"});
}

// ---- contention

// 200 coroutines on 2 threads share 4 permits: never more than 4 inside, all
// finish, the permits are all back.
TEST(AsioSynchronizersContention, TwoHundredCoroutinesShareFourPermits) {
  constexpr int coroutines = 200;
  constexpr int permits = 4;
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  Semaphore sem = client.get_semaphore("cs:sem");
  ASSERT_TRUE(sem.try_set_permits(permits));
  std::atomic<int> inside{0};
  std::atomic<int> most{0};
  std::atomic<int> finished{0};
  Runner runner(2);
  std::vector<std::future<void>> tasks;
  for (int n = 0; n < coroutines; ++n) {
    tasks.push_back(runner.spawn([&]() -> asio::awaitable<void> {
      co_await async_acquire(sem, 1, asio::use_awaitable);
      int now = inside.fetch_add(1) + 1;
      int seen = most.load();
      while (now > seen && !most.compare_exchange_weak(seen, now)) {
      }
      // Hold across a suspension, so other coroutines run meanwhile.
      asio::steady_timer pause(co_await asio::this_coro::executor, 1ms);
      co_await pause.async_wait(asio::use_awaitable);
      inside.fetch_sub(1);
      co_await async_release(sem, 1, asio::use_awaitable);
      ++finished;
    }));
  }
  for (auto& task : tasks) get_within(task, 60s);
  EXPECT_EQ(finished.load(), coroutines);
  EXPECT_LE(most.load(), permits);
  EXPECT_GE(most.load(), 2);  // they did overlap
  EXPECT_EQ(sem.available_permits(), permits);
  EXPECT_TRUE(eventually([&] { return subscribers(probe, "redisson_sc:{cs:sem}") == 0; }));
  EXPECT_EQ(kept(probe), std::vector<std::string>{"cs:sem"});
}

// A latch of N opened by N counting coroutines wakes M waiting coroutines
// (on another Client), none of them before the last count-down.
TEST(AsioSynchronizersContention, ALatchOpenedByCountingCoroutinesWakesEveryWaiter) {
  constexpr int counters = 8;
  constexpr int waiters = 24;
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  Client waiter_client{fast_config(server)};
  CountDownLatch latch = client.get_count_down_latch("cs:latch");
  CountDownLatch waited = waiter_client.get_count_down_latch("cs:latch");
  ASSERT_TRUE(latch.try_set_count(counters));
  std::atomic<int> counted{0};
  std::atomic<int> early{0};
  Runner runner(2);
  std::vector<std::future<void>> waiting;
  for (int n = 0; n < waiters; ++n) {
    waiting.push_back(runner.spawn([&]() -> asio::awaitable<void> {
      co_await async_wait(waited, asio::use_awaitable);
      if (counted.load() != counters) ++early;
    }));
  }
  ASSERT_TRUE(eventually([&] { return subscribers(probe, "redisson_countdownlatch__channel__{cs:latch}") == 1; }));
  std::vector<std::future<void>> counting;
  for (int n = 0; n < counters; ++n) {
    counting.push_back(runner.spawn([&]() -> asio::awaitable<void> {
      // counted rises before the count-down is sent: a waiter woken by the
      // last one sees every count.
      ++counted;
      co_await async_count_down(latch, asio::use_awaitable);
    }));
  }
  for (auto& task : counting) get_within(task);
  for (auto& task : waiting) get_within(task);
  EXPECT_EQ(early.load(), 0);
  EXPECT_EQ(latch.count(), 0);
  EXPECT_TRUE(eventually([&] { return subscribers(probe, "redisson_countdownlatch__channel__{cs:latch}") == 0; }));
  EXPECT_EQ(left_behind(probe), std::vector<std::string>{});
}

}  // namespace
}  // namespace warden::test
