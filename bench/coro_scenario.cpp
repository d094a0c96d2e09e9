// warden-bench: S1 and S3 through coroutines, on one io_context run by the
// calling thread: no thread blocks, the pairs are co_awaited.
#include "coro_scenario.hpp"

#include <warden/asio.hpp>
#include <warden/lock.hpp>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>

#include <chrono>
#include <exception>
#include <memory>

#include "cpu_time.hpp"

namespace warden_bench {
namespace {

struct run_state {
  std::vector<warden::Lock> locks;
  std::vector<int> occupied;  // one thread runs every coroutine: no atomics needed
  bool in_window = false;
  bool stopping = false;
  unsigned running = 0;
  coro_result* result = nullptr;
};

asio::awaitable<void> worker(run_state& s, unsigned index) {
  warden::task_owner me;
  for (std::size_t k = index; !s.stopping; ++k) {
    const std::size_t which = k % s.locks.size();
    try {
      co_await warden::async_lock(s.locks[which], me, asio::use_awaitable);
      if (s.occupied[which]++ != 0) ++s.result->overlaps;
      --s.occupied[which];
      co_await warden::async_unlock(s.locks[which], me, asio::use_awaitable);
      if (s.in_window) ++s.result->pairs_in_window;
    } catch (const std::exception& error) {
      if (s.result->errors++ == 0) s.result->first_error = error.what();
    }
  }
  --s.running;
}

}  // namespace

bool coro_scenarios_built() { return true; }

coro_result run_coro_scenario(warden::Client& client, const std::string& name, const std::string& description,
                              unsigned coroutines, const std::vector<std::string>& lock_names, double duration_s) {
  coro_result result;
  result.name = name;
  result.description = description;
  run_state s;
  s.result = &result;
  for (const auto& lock_name : lock_names) s.locks.push_back(client.get_lock(lock_name));
  s.occupied.assign(s.locks.size(), 0);

  asio::io_context io(1);
  double cpu_start = -1;
  std::chrono::steady_clock::time_point start;
  asio::steady_timer window(io);
  // A short ramp, so the window starts with every coroutine in its loop.
  window.expires_after(std::chrono::milliseconds(200));
  window.async_wait([&](std::error_code) {
    s.in_window = true;
    cpu_start = process_cpu_s();
    start = std::chrono::steady_clock::now();
    window.expires_after(
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(duration_s)));
    window.async_wait([&](std::error_code) {
      s.in_window = false;
      s.stopping = true;
      result.window_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const double cpu_stop = process_cpu_s();
      if (cpu_start >= 0 && cpu_stop >= 0) result.client_cpu_s = cpu_stop - cpu_start;
    });
  });
  s.running = coroutines;
  for (unsigned i = 0; i < coroutines; ++i) asio::co_spawn(io, worker(s, i), asio::detached);
  io.run();  // returns once every coroutine has finished its last pair
  if (result.window_s > 0) result.pairs_per_s = static_cast<double>(result.pairs_in_window) / result.window_s;
  return result;
}

}  // namespace warden_bench
