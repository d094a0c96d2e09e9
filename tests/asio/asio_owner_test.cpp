// Holds belong to a task_owner, not to the thread running the coroutine:
// re-entry after a resume on another thread, and another task on the same
// thread refused.
#include <gtest/gtest.h>

#include <asio/bind_executor.hpp>
#include <asio/post.hpp>

#include <thread>

#include "asio_env.hpp"
#include "redis_probe.hpp"

namespace warden::test {
namespace {

TEST(AsioOwner, ReentersAfterResumingOnAnotherThread) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  Lock lock = client.get_lock("o:hop");
  Runner first(1);
  Runner second(1);
  auto done = first.spawn([&]() -> asio::awaitable<void> {
    task_owner me;
    co_await async_lock(lock, me, asio::use_awaitable);
    auto before = std::this_thread::get_id();
    // Resume on the other context's thread.
    co_await asio::post(asio::bind_executor(second.context.get_executor(), asio::use_awaitable));
    EXPECT_TRUE(second.is_worker());
    EXPECT_NE(std::this_thread::get_id(), before);
    bool again = co_await async_try_lock(lock, me, lock_options(), asio::use_awaitable);
    EXPECT_TRUE(again);
    EXPECT_EQ(lock.hold_count(me), 2);
    EXPECT_EQ(lock.hold_count(current_thread_id()), 0);  // the thread holds nothing
    co_await async_unlock(lock, me, asio::use_awaitable);
    co_await asio::post(asio::bind_executor(first.context.get_executor(), asio::use_awaitable));
    co_await async_unlock(lock, me, asio::use_awaitable);
  });
  get_within(done);
  EXPECT_FALSE(probe.exists("o:hop"));
}

TEST(AsioOwner, AnotherTaskOnTheSameThreadCannotReleaseTheHold) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  Lock lock = client.get_lock("o:mine");
  Runner runner(1);  // one thread: both tasks run on it
  task_owner holder;
  auto taken = runner.spawn([&]() -> asio::awaitable<void> { co_await async_lock(lock, holder, asio::use_awaitable); });
  get_within(taken);
  auto intruder = runner.spawn([&]() -> asio::awaitable<std::error_code> {
    task_owner me;
    EXPECT_NE(me, holder);
    bool got = co_await async_try_lock(lock, me, lock_options().with_wait(50ms), asio::use_awaitable);
    EXPECT_FALSE(got);
    try {
      co_await async_unlock(lock, me, asio::use_awaitable);
    } catch (const std::system_error& error) {
      co_return error.code();
    }
    co_return std::error_code{};
  });
  EXPECT_EQ(get_within(intruder), errc::not_owner);
  EXPECT_TRUE(lock.is_held(holder));
  EXPECT_EQ(probe.hgetall("o:mine").size(), 1u);  // unchanged: one owner field
  auto released =
      runner.spawn([&]() -> asio::awaitable<void> { co_await async_unlock(lock, holder, asio::use_awaitable); });
  get_within(released);
  EXPECT_FALSE(probe.exists("o:mine"));
}

TEST(AsioOwner, IsFreshDistinctAndConvertsToThreadId) {
  task_owner a;
  task_owner b;
  EXPECT_NE(a, b);
  EXPECT_NE(a.id(), current_thread_id());
  thread_id raw = a;
  EXPECT_EQ(task_owner(raw), a);
  task_owner copy = a;
  EXPECT_EQ(copy, a);
}

}  // namespace
}  // namespace warden::test
