// Compiled (syntax only) by clang++ -std=c++20 in asio.ClangCompilesTheCxx20Layer:
// every operation of <warden/asio.hpp> with each kind of completion token,
// awaitable_operators, and <warden/coro.hpp>. Never run.
#include <warden/asio.hpp>
#include <warden/coro.hpp>
#include <warden/warden.hpp>

#include <asio/awaitable.hpp>
#include <asio/bind_cancellation_slot.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/experimental/deferred.hpp>
#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/use_future.hpp>

#include <coroutine>
#include <cstdint>
#include <string>

namespace {

using namespace asio::experimental::awaitable_operators;
using namespace std::chrono_literals;

asio::awaitable<void> every_awaitable(warden::Client& client) {
  warden::task_owner me;
  warden::Lock lock = client.get_lock("a");
  warden::FencedLock fenced = client.get_fenced_lock("f");
  warden::MultiLock multi{client.get_lock("m1"), client.get_lock("m2")};
  warden::ReadWriteLock rw = client.get_read_write_lock("rw");
  co_await warden::async_lock(lock, me, asio::use_awaitable);
  [[maybe_unused]] bool again =
      co_await warden::async_try_lock(lock, me, warden::lock_options().with_wait(1s), asio::use_awaitable);
  co_await warden::async_unlock(lock, me, asio::use_awaitable);
  [[maybe_unused]] auto token =
      co_await warden::async_lock_and_get_token(fenced, me, warden::lock_options(), asio::use_awaitable);
  [[maybe_unused]] auto maybe =
      co_await warden::async_try_lock_and_get_token(fenced, me, warden::lock_options(), asio::use_awaitable);
  co_await warden::async_lock(multi, me, asio::use_awaitable);
  co_await warden::async_unlock(multi, me, asio::use_awaitable);
  co_await warden::async_lock(rw.read_lock(), me, asio::use_awaitable);
  asio::steady_timer timer(co_await asio::this_coro::executor, 1s);
  [[maybe_unused]] auto winner =
      co_await (warden::async_lock(lock, me, asio::use_awaitable) || timer.async_wait(asio::use_awaitable));
}

asio::awaitable<void> every_synchronizer(warden::Client& client) {
  warden::Semaphore sem = client.get_semaphore("s");
  warden::PermitExpirableSemaphore pes = client.get_permit_expirable_semaphore("p");
  warden::CountDownLatch latch = client.get_count_down_latch("l");
  co_await warden::async_acquire(sem, 1, asio::use_awaitable);
  [[maybe_unused]] bool taken =
      co_await warden::async_try_acquire(sem, 1, warden::lock_options().with_wait(1s), asio::use_awaitable);
  co_await warden::async_release(sem, 2, asio::use_awaitable);
  [[maybe_unused]] std::int64_t free = co_await warden::async_drain_permits(sem, asio::use_awaitable);
  std::string id = co_await warden::async_acquire(pes, asio::use_awaitable);
  [[maybe_unused]] bool longer = co_await warden::async_update_lease_time(pes, id, 10s, asio::use_awaitable);
  co_await warden::async_release(pes, id, asio::use_awaitable);
  [[maybe_unused]] auto maybe = co_await warden::async_try_acquire(pes, warden::lock_options(), asio::use_awaitable);
  co_await warden::async_count_down(latch, asio::use_awaitable);
  [[maybe_unused]] bool open = co_await warden::async_wait_for(latch, 1s, asio::use_awaitable);
  asio::steady_timer timer(co_await asio::this_coro::executor, 1s);
  [[maybe_unused]] auto winner =
      co_await (warden::async_wait(latch, asio::use_awaitable) || timer.async_wait(asio::use_awaitable));
}

[[maybe_unused]] void every_token(warden::Client& client, asio::io_context& context) {
  warden::task_owner me;
  warden::Lock lock = client.get_lock("a");
  std::future<void> future = warden::async_lock(lock, me, asio::use_future);
  auto deferred = warden::async_lock(lock, me, asio::experimental::deferred);
  std::move(deferred)([](std::error_code) {});
  asio::cancellation_signal signal;
  warden::async_lock(lock, me, asio::bind_cancellation_slot(signal.slot(), [](std::error_code) {}));
  asio::co_spawn(context, every_awaitable(client), asio::detached);
  asio::co_spawn(context, every_synchronizer(client), asio::detached);
}

struct fire_and_forget {
  struct promise_type {
    fire_and_forget get_return_object() { return {}; }
    std::suspend_never initial_suspend() noexcept { return {}; }
    std::suspend_never final_suspend() noexcept { return {}; }
    void return_void() {}
    void unhandled_exception() {}
  };
};

[[maybe_unused]] fire_and_forget without_asio(warden::Lock lock, warden::coro::executor post) {
  warden::task_owner me;
  co_await warden::coro::lock(lock, me, post);
  [[maybe_unused]] bool again = co_await warden::coro::try_lock(lock, me, post, warden::lock_options());
  co_await warden::coro::unlock(lock, me, post);
}

[[maybe_unused]] fire_and_forget synchronizers_without_asio(warden::Client& client, warden::coro::executor post) {
  warden::Semaphore sem = client.get_semaphore("s");
  warden::PermitExpirableSemaphore pes = client.get_permit_expirable_semaphore("p");
  warden::CountDownLatch latch = client.get_count_down_latch("l");
  co_await warden::coro::acquire(sem, 1, post);
  co_await warden::coro::release(sem, 1, post);
  std::string id = co_await warden::coro::acquire(pes, post);
  co_await warden::coro::release(pes, id, post);
  co_await warden::coro::count_down(latch, post);
  co_await warden::coro::wait(latch, post);
}

}  // namespace
