// Shared set-up for the Asio tests: an io_context run by N threads, and a way
// to run a coroutine on it and wait for its end from the test's thread.
#pragma once

#include <warden/asio.hpp>
#include <warden/warden.hpp>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/io_context.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/use_future.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "test_env.hpp"

namespace warden::test {

// An io_context kept running by `threads` threads until the object goes.
class Runner {
 public:
  explicit Runner(int threads = 1) : work_(context.get_executor()) {
    for (int i = 0; i < threads; ++i) {
      threads_.emplace_back([this] {
        context.run();
        std::lock_guard<std::mutex> guard(mutex_);
        ++returned_;
        ran_out_.notify_all();
      });
    }
  }
  // Lets run() return once warden's operations let go of their work count:
  // the I/O thread may still be inside the post of a completion the test has
  // already seen, and the context must outlive that post (docs/asio.md). A
  // test that leaves a call pending is stopped after a bound instead.
  ~Runner() {
    work_.reset();
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ran_out_.wait_for(lock, std::chrono::seconds(10), [this] { return returned_ == threads_.size(); });
    }
    context.stop();
    for (auto& thread : threads_) thread.join();
  }
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Runs `coroutine` (a function returning an asio::awaitable<T>, e.g. a
  // lambda, which co_spawn keeps alive until it ends; or an awaitable) on
  // the context; the future throws what it threw.
  template <class Coroutine>
  auto spawn(Coroutine&& coroutine) {
    return asio::co_spawn(context, std::forward<Coroutine>(coroutine), asio::use_future);
  }

  bool is_worker() const {
    for (auto& thread : threads_) {
      if (thread.get_id() == std::this_thread::get_id()) return true;
    }
    return false;
  }

  asio::io_context context;

 private:
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable ran_out_;
  std::size_t returned_ = 0;
};

// The keys a finished run leaves in Redis that it should not: anything but a
// release's result (redisson_unlock_latch:..., kept briefly: it must have a
// TTL), the mark of an attempt taken back (warden_acquire_cancel:..., kept
// as long as a late copy of it could run: it must have a TTL too) and a
// fenced lock's token counter (which must only ever rise).
template <class Probe>
std::vector<std::string> left_behind(Probe& probe) {
  std::vector<std::string> out;
  for (auto& key : probe.keys("*")) {
    bool latch = (key.rfind("redisson_unlock_latch:", 0) == 0 || key.rfind("warden_acquire_cancel:", 0) == 0) &&
                 probe.pttl(key) > 0;
    bool counter = key.rfind("redisson_lock_token:", 0) == 0;
    if (!latch && !counter) out.push_back(key);
  }
  return out;
}

// The future's value within `timeout`, or a test failure.
template <class T>
T get_within(std::future<T>& future, std::chrono::milliseconds timeout = 10s) {
  if (future.wait_for(timeout) != std::future_status::ready) {
    ADD_FAILURE() << "no completion within " << timeout.count() << " ms";
    throw std::runtime_error("timed out");
  }
  return future.get();
}

}  // namespace warden::test
