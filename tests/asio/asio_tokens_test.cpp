// <warden/asio.hpp>: every lock kind's waiting and releasing operations with
// each kind of completion token (callback, use_future, use_awaitable,
// deferred), completing on the handler's executor, errors as error_code.
#include <gtest/gtest.h>

#include <asio/bind_executor.hpp>
#include <asio/experimental/deferred.hpp>
#include <asio/strand.hpp>
#include <asio/system_executor.hpp>

#include <atomic>
#include <memory>
#include <string>

#include "asio_env.hpp"
#include "redis_probe.hpp"

namespace warden::test {
namespace {

// Takes, re-checks and releases `lock` through the awaitable forms, from a
// fresh task owner; returns the keys left (none expected).
asio::awaitable<void> round_trip(BasicLock lock, Runner& runner) {
  task_owner me;
  co_await async_lock(lock, me, asio::use_awaitable);
  EXPECT_TRUE(runner.is_worker());
  EXPECT_TRUE(lock.is_held(me));
  bool again = co_await async_try_lock(lock, me, lock_options().with_wait(0ms), asio::use_awaitable);
  EXPECT_TRUE(again);  // re-entrant
  EXPECT_EQ(lock.hold_count(me), 2);
  co_await async_unlock(lock, me, asio::use_awaitable);
  co_await async_unlock(lock, me, asio::use_awaitable);
  EXPECT_FALSE(lock.is_locked());
}

TEST(AsioTokens, EverySingleNameKindWithUseAwaitable) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  Runner runner(2);
  ReadWriteLock rw = client.get_read_write_lock("t:rw");
  std::vector<BasicLock> kinds{client.get_lock("t:lock"),
                               client.get_fair_lock("t:fair"),
                               client.get_spin_lock("t:spin"),
                               client.get_fenced_lock("t:fenced"),
                               rw.read_lock(),
                               rw.write_lock()};
  for (auto& lock : kinds) {
    auto done = runner.spawn(round_trip(lock, runner));
    get_within(done);
  }
  EXPECT_EQ(left_behind(probe), std::vector<std::string>{});
}

TEST(AsioTokens, FencedTokensRiseAndTryReportsThemOrNothing) {
  RedisServer server;
  Client client{fast_config(server)};
  Client rival_client{fast_config(server)};
  Runner runner(1);
  FencedLock lock = client.get_fenced_lock("t:tokens");
  FencedLock rival = rival_client.get_fenced_lock("t:tokens");
  auto done = runner.spawn([&]() -> asio::awaitable<void> {
    task_owner me;
    auto first = co_await async_lock_and_get_token(lock, me, lock_options(), asio::use_awaitable);
    co_await async_unlock(lock, me, asio::use_awaitable);
    auto second = co_await async_try_lock_and_get_token(lock, me, lock_options().with_wait(1s), asio::use_awaitable);
    EXPECT_TRUE(second.has_value());
    if (second) {
      EXPECT_GT(*second, first);
    }
    task_owner other;
    auto none =
        co_await async_try_lock_and_get_token(rival, other, lock_options().with_wait(50ms), asio::use_awaitable);
    EXPECT_FALSE(none.has_value());  // held by `me`
    co_await async_unlock(lock, me, asio::use_awaitable);
  });
  get_within(done);
}

TEST(AsioTokens, MultiLockAndRedLockWithUseAwaitable) {
  RedisServer server;
  RedisServer second;
  RedisServer third;
  RedisProbe probe(server);
  Client a{fast_config(server)};
  Client b{fast_config(second)};
  Client c{fast_config(third)};
  Runner runner(2);
  MultiLock multi{a.get_lock("t:m1"), a.get_lock("t:m2"), a.get_lock("t:m3")};
  RedLock red{a.get_lock("t:r1"), b.get_lock("t:r2"), c.get_lock("t:r3")};
  auto done = runner.spawn([&]() -> asio::awaitable<void> {
    task_owner me;
    co_await async_lock(multi, me, asio::use_awaitable);
    EXPECT_TRUE(probe.exists("t:m1") && probe.exists("t:m2") && probe.exists("t:m3"));
    task_owner other;
    bool taken = co_await async_try_lock(multi, other, lock_options().with_wait(50ms), asio::use_awaitable);
    EXPECT_FALSE(taken);
    co_await async_unlock(multi, me, asio::use_awaitable);
    // The wait is generous: Clients b and c may still be connecting, and a
    // loaded machine (the sanitizer passes) can take over a second for that.
    taken = co_await async_try_lock(red, me, lock_options().with_wait(10s), asio::use_awaitable);
    EXPECT_TRUE(taken);
    // A RedLock is taken once a majority answered: the third node's hold
    // may land a moment later (it is kept when it does).
    EXPECT_TRUE(eventually(
        [&] { return probe.exists("t:r1") && b.get_lock("t:r2").is_held(me) && c.get_lock("t:r3").is_held(me); }));
    co_await async_unlock(red, me, asio::use_awaitable);
  });
  get_within(done);
  EXPECT_EQ(left_behind(probe), std::vector<std::string>{});
}

TEST(AsioTokens, CallbackRunsOnItsBoundStrandNotOnTheIoThread) {
  RedisServer server;
  Client client{fast_config(server)};
  Runner runner(2);
  Lock lock = client.get_lock("t:callback");
  auto strand = asio::make_strand(runner.context);
  task_owner me;
  std::promise<std::pair<bool, std::error_code>> seen;
  async_lock(lock, me, asio::bind_executor(strand, [&](std::error_code error) {
               // A blocking call throws errc::would_deadlock on warden's I/O thread.
               bool usable = strand.running_in_this_thread() && lock.is_held(me);
               seen.set_value({usable, error});
             }));
  auto future = seen.get_future();
  auto [on_strand, error] = get_within(future);
  EXPECT_FALSE(error);
  EXPECT_TRUE(on_strand);
  std::promise<std::error_code> released;
  async_unlock(lock, me, asio::bind_executor(strand, [&](std::error_code e) { released.set_value(e); }));
  auto released_future = released.get_future();
  EXPECT_FALSE(get_within(released_future));
  EXPECT_FALSE(lock.is_locked());
}

TEST(AsioTokens, AnUnboundCallbackRunsOnTheSystemExecutorNotOnTheIoThread) {
  RedisServer server;
  Client client{fast_config(server)};
  Lock lock = client.get_lock("t:unbound");
  task_owner me;
  std::promise<bool> seen;
  async_lock(lock, me, [&](std::error_code error) {
    bool held = false;
    try {
      held = !error && lock.is_held(me);  // throws errc::would_deadlock on the I/O thread
    } catch (const Error&) {
    }
    seen.set_value(held);
  });
  auto future = seen.get_future();
  EXPECT_TRUE(get_within(future));
  lock.unlock_async(me).get();
}

TEST(AsioTokens, UseFutureAndDeferred) {
  RedisServer server;
  Client client{fast_config(server)};
  Runner runner(1);
  Lock lock = client.get_lock("t:future");
  task_owner me;
  std::future<void> taken = async_lock(lock, me, asio::use_future);
  get_within(taken);
  EXPECT_TRUE(lock.is_held(me));
  std::future<bool> again = async_try_lock(lock, me, lock_options(), asio::use_future);
  EXPECT_TRUE(get_within(again));
  std::future<void> released = async_unlock(lock, me, asio::use_future);
  get_within(released);
  released = async_unlock(lock, me, asio::use_future);
  get_within(released);
  EXPECT_FALSE(lock.is_locked());

  // deferred: nothing happens until the operation is started.
  auto op = async_lock(lock, me, asio::experimental::deferred);
  EXPECT_FALSE(lock.is_locked());
  std::promise<std::error_code> done;
  std::move(op)(asio::bind_executor(runner.context, [&](std::error_code error) { done.set_value(error); }));
  auto future = done.get_future();
  EXPECT_FALSE(get_within(future));
  EXPECT_TRUE(lock.is_held(me));
  lock.unlock_async(me).get();
}

TEST(AsioTokens, ErrorsArriveAsWardenErrorCodes) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  Runner runner(1);
  probe.command({"SET", "t:string", "not a lock"});
  Lock lock = client.get_lock("t:string");
  task_owner me;
  std::promise<std::error_code> wrong;
  async_lock(lock, me, asio::bind_executor(runner.context, [&](std::error_code error) { wrong.set_value(error); }));
  auto future = wrong.get_future();
  EXPECT_EQ(get_within(future), errc::wrong_type);
  EXPECT_EQ(probe.get("t:string"), "not a lock");

  // use_awaitable throws the code as std::system_error.
  auto done = runner.spawn([&]() -> asio::awaitable<std::error_code> {
    try {
      co_await async_lock(lock, me, asio::use_awaitable);
    } catch (const std::system_error& error) {
      co_return error.code();
    }
    co_return std::error_code{};
  });
  EXPECT_EQ(get_within(done), errc::wrong_type);
}

}  // namespace
}  // namespace warden::test
