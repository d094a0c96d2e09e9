// <warden/coro.hpp>: the C++20 awaitable without Asio, resumed through an
// executor the caller supplies; real redis-server.
#include <gtest/gtest.h>

#include <warden/coro.hpp>
#include <warden/warden.hpp>

#include <condition_variable>
#include <coroutine>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include "redis_probe.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

// One worker thread running what is posted to it, in order.
class Worker {
 public:
  Worker() : thread_([this] { run(); }) {}
  ~Worker() {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  coro::executor executor() {
    return [this](std::function<void()> job) {
      // Notified under the lock: the poster is warden's I/O thread, and once
      // the job ran the test may destroy this Worker; holding the lock keeps
      // the condition variable alive until the notification is done.
      std::lock_guard<std::mutex> guard(mutex_);
      jobs_.push_back(std::move(job));
      cv_.notify_all();
    };
  }
  std::thread::id id() const { return thread_.get_id(); }

 private:
  void run() {
    std::unique_lock<std::mutex> guard(mutex_);
    while (true) {
      cv_.wait(guard, [&] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      auto job = std::move(jobs_.front());
      jobs_.pop_front();
      guard.unlock();
      job();
      guard.lock();
    }
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::thread thread_;
};

// The smallest coroutine type: starts at once, reports its end (or what it
// threw) through a std::future.
struct task {
  struct promise_type {
    std::promise<void> done;
    task get_return_object() {
      return task{done.get_future(), std::coroutine_handle<promise_type>::from_promise(*this)};
    }
    std::suspend_never initial_suspend() noexcept { return {}; }
    std::suspend_never final_suspend() noexcept { return {}; }
    void return_void() { done.set_value(); }
    void unhandled_exception() { done.set_exception(std::current_exception()); }
  };
  std::future<void> finished;
  std::coroutine_handle<> frame;  // valid only while the coroutine is suspended
};

void wait_for(task& t) {
  ASSERT_EQ(t.finished.wait_for(10s), std::future_status::ready);
  t.finished.get();
}

TEST(CoroAwaitable, LocksReentersAndUnlocksResumingOnTheGivenExecutor) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  Lock lock = client.get_lock("coro:lock");
  Worker worker;
  auto post = worker.executor();
  auto body = [&]() -> task {
    task_owner me;
    co_await coro::lock(lock, me, post);
    EXPECT_EQ(std::this_thread::get_id(), worker.id());
    EXPECT_TRUE(lock.is_held(me));  // a blocking call: not on warden's I/O thread
    bool again = co_await coro::try_lock(lock, me, post, lock_options().with_wait(0ms));
    EXPECT_TRUE(again);
    EXPECT_EQ(lock.hold_count(me), 2);
    co_await coro::unlock(lock, me, post);
    co_await coro::unlock(lock, me, post);
    EXPECT_EQ(std::this_thread::get_id(), worker.id());
  };
  task t = body();
  wait_for(t);
  EXPECT_FALSE(probe.exists("coro:lock"));
}

TEST(CoroAwaitable, FencedAndCompositeKinds) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  FencedLock fenced = client.get_fenced_lock("coro:fenced");
  MultiLock multi{client.get_lock("coro:m1"), client.get_lock("coro:m2")};
  Worker worker;
  auto post = worker.executor();
  auto body = [&]() -> task {
    task_owner me;
    auto first = co_await coro::lock_and_get_token(fenced, me, post);
    co_await coro::unlock(fenced, me, post);
    auto second = co_await coro::try_lock_and_get_token(fenced, me, post, lock_options().with_wait(1s));
    EXPECT_TRUE(second.has_value() && *second > first);
    co_await coro::unlock(fenced, me, post);
    co_await coro::lock(multi, me, post);
    EXPECT_TRUE(probe.exists("coro:m1") && probe.exists("coro:m2"));
    task_owner other;
    bool taken = co_await coro::try_lock(multi, other, post, lock_options().with_wait(50ms));
    EXPECT_FALSE(taken);
    co_await coro::unlock(multi, me, post);
  };
  task t = body();
  wait_for(t);
  EXPECT_FALSE(probe.exists("coro:m1") || probe.exists("coro:m2"));
}

TEST(CoroAwaitable, ErrorsThrowWardenErrorAndAWrongOwnerIsRefused) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  probe.command({"SET", "coro:string", "x"});
  Lock wrong = client.get_lock("coro:string");
  Lock lock = client.get_lock("coro:owned");
  Worker worker;
  auto post = worker.executor();
  auto body = [&]() -> task {
    task_owner me;
    task_owner other;  // another task on the same worker thread
    try {
      co_await coro::lock(wrong, me, post);
      ADD_FAILURE() << "no error";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), errc::wrong_type);
    }
    co_await coro::lock(lock, me, post);
    try {
      co_await coro::unlock(lock, other, post);
      ADD_FAILURE() << "released by another owner";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), errc::not_owner);
    }
    EXPECT_TRUE(lock.is_held(me));
    co_await coro::unlock(lock, me, post);
  };
  task t = body();
  wait_for(t);
  EXPECT_EQ(probe.get("coro:string"), "x");
  EXPECT_FALSE(probe.exists("coro:owned"));
}

TEST(CoroAwaitable, AHoldWhoseResumptionIsDroppedIsGivenBack) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  Lock lock = client.get_lock("coro:dropped");
  std::promise<void> dropped;
  coro::executor dropping = [&](std::function<void()>) { dropped.set_value(); };  // never runs it
  long long scripts_before = probe.script_calls();
  auto body = [&]() -> task { co_await coro::lock(lock, task_owner(), dropping); };
  task t = body();  // suspended for good
  ASSERT_EQ(dropped.get_future().wait_for(10s), std::future_status::ready);
  // The lock was taken (the executor was asked to resume) and given back:
  // an acquire script and a release script ran, and the key is gone.
  EXPECT_TRUE(eventually([&] { return !probe.exists("coro:dropped") && probe.script_calls() >= scripts_before + 2; }));
  t.frame.destroy();
}

// ---- synchronizers

TEST(CoroSynchronizers, SemaphoreAcquiresTriesAndReleasesOnTheGivenExecutor) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  Semaphore sem = client.get_semaphore("coro:sem");
  ASSERT_TRUE(sem.try_set_permits(3));
  Worker worker;
  auto post = worker.executor();
  auto body = [&]() -> task {
    co_await coro::acquire(sem, 2, post);
    EXPECT_EQ(std::this_thread::get_id(), worker.id());
    EXPECT_EQ(sem.available_permits(), 1);  // a blocking call: not on warden's I/O thread
    bool more = co_await coro::try_acquire(sem, 2, post, lock_options().with_wait(50ms));
    EXPECT_FALSE(more);
    more = co_await coro::try_acquire(sem, 1, post);
    EXPECT_TRUE(more);
    co_await coro::release(sem, 2, post);
    EXPECT_TRUE(co_await coro::release_if_exists(sem, 1, post));
    EXPECT_EQ(std::this_thread::get_id(), worker.id());
    try {
      co_await coro::acquire(sem, 0, post);
      ADD_FAILURE() << "no error";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), errc::invalid_argument);
    }
  };
  task t = body();
  wait_for(t);
  EXPECT_EQ(probe.get("coro:sem"), "3");
}

TEST(CoroSynchronizers, PermitsHaveIdsAndAreReleased) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  PermitExpirableSemaphore sem = client.get_permit_expirable_semaphore("coro:pes");
  ASSERT_TRUE(sem.try_set_permits(1));
  Worker worker;
  auto post = worker.executor();
  auto body = [&]() -> task {
    std::string id = co_await coro::acquire(sem, post, lock_options().with_lease(30s));
    EXPECT_EQ(id.size(), 32u);
    auto none = co_await coro::try_acquire(sem, post, lock_options().with_wait(50ms));
    EXPECT_FALSE(none.has_value());
    co_await coro::release(sem, id, post);
    try {
      co_await coro::release(sem, id, post);
      ADD_FAILURE() << "released twice";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), errc::not_owner);
    }
    auto again = co_await coro::try_acquire(sem, post);
    EXPECT_TRUE(again.has_value());
    if (again) {
      bool released = co_await coro::try_release(sem, *again, post);
      EXPECT_TRUE(released);
    }
  };
  task t = body();
  wait_for(t);
  EXPECT_EQ(sem.available_permits(), 1);
  EXPECT_EQ(sem.acquired_permits(), 0);
}

TEST(CoroSynchronizers, ALatchWaitResumesOnceCountedDown) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  CountDownLatch latch = client.get_count_down_latch("coro:latch");
  ASSERT_TRUE(latch.try_set_count(2));
  Worker worker;
  auto post = worker.executor();
  auto timed = [&]() -> task {
    bool open = co_await coro::wait_for(latch, 50ms, post);
    EXPECT_FALSE(open);
  };
  task timing = timed();
  wait_for(timing);
  auto waiter = [&]() -> task {
    co_await coro::wait(latch, post);
    EXPECT_EQ(std::this_thread::get_id(), worker.id());
    EXPECT_EQ(latch.count(), 0);
  };
  task waiting = waiter();
  auto counter = [&]() -> task {
    co_await coro::count_down(latch, post);
    co_await coro::count_down(latch, post);
  };
  ASSERT_TRUE(eventually([&] { return subscribers(probe, "redisson_countdownlatch__channel__{coro:latch}") == 1; }));
  EXPECT_EQ(waiting.finished.wait_for(50ms), std::future_status::timeout);
  task counting = counter();
  wait_for(counting);
  wait_for(waiting);
  EXPECT_FALSE(probe.exists("coro:latch"));
}

TEST(CoroSynchronizers, APermitWhoseResumptionIsDroppedIsReleased) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  PermitExpirableSemaphore sem = client.get_permit_expirable_semaphore("coro:pes-dropped");
  ASSERT_TRUE(sem.try_set_permits(1));
  std::promise<void> dropped;
  coro::executor dropping = [&](std::function<void()>) { dropped.set_value(); };  // never runs it
  auto body = [&]() -> task { co_await coro::acquire(sem, dropping); };
  task t = body();  // suspended for good
  ASSERT_EQ(dropped.get_future().wait_for(10s), std::future_status::ready);
  // The permit was taken (the executor was asked to resume) and released by its id.
  EXPECT_TRUE(eventually([&] { return sem.available_permits() == 1 && sem.acquired_permits() == 0; }));
  t.frame.destroy();
}

}  // namespace
}  // namespace warden::test
