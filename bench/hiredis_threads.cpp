#include "hiredis_threads.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "cpu_time.hpp"
#include "stats.hpp"

namespace warden_bench {

loop_result run_side_by_side(const std::vector<std::unique_ptr<hiredis_loop>>& loops,
                             std::chrono::duration<double> duration, const std::function<double()>& server_cpu_s) {
  const std::size_t n = loops.size();
  std::vector<loop_result> results(n);
  std::vector<std::vector<std::int64_t>> samples(n);
  // Every thread is up and connected before any window opens, so the
  // first ones do not run alone.
  std::mutex mutex;
  std::condition_variable ready_cv, go_cv;
  std::size_t ready = 0;
  bool go = false;
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      {
        std::unique_lock<std::mutex> lock(mutex);
        ++ready;
        ready_cv.notify_one();
        go_cv.wait(lock, [&] { return go; });
      }
      results[i] = loops[i]->run(duration, std::chrono::nanoseconds::zero(), nullptr, &samples[i]);
    });
  }
  {
    std::unique_lock<std::mutex> lock(mutex);
    ready_cv.wait(lock, [&] { return ready == n; });
  }
  auto server_cpu = [&] { return server_cpu_s ? server_cpu_s() : -1.0; };
  const double server_start = server_cpu();
  const double process_start = process_cpu_s();
  const auto switches_start = process_switches();
  {
    std::lock_guard<std::mutex> lock(mutex);
    go = true;
  }
  go_cv.notify_all();
  for (auto& thread : threads) thread.join();
  const double process_stop = process_cpu_s();
  const auto switches_stop = process_switches();
  const double server_stop = server_cpu();

  loop_result all;
  all.ran = true;
  all.ok = true;
  std::vector<std::int64_t> latencies;
  double loop_threads_cpu = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const loop_result& r = results[i];
    if (!r.ok && all.ok) {
      all.ok = false;
      all.error = r.error;
    }
    all.window_s = std::max(all.window_s, r.window_s);
    all.pairs += r.pairs;
    latencies.insert(latencies.end(), samples[i].begin(), samples[i].end());
    if (r.loop_thread_cpu_s < 0 || loop_threads_cpu < 0) {
      loop_threads_cpu = -1;
    } else {
      loop_threads_cpu += r.loop_thread_cpu_s;
    }
  }
  all.pairs_per_s = all.window_s > 0 ? static_cast<double>(all.pairs) / all.window_s : 0;
  all.pair_latency = summarize(std::move(latencies));
  if (process_start >= 0 && process_stop >= 0) all.client_cpu_s = process_stop - process_start;
  all.loop_thread_cpu_s = loop_threads_cpu;
  all.client_switches = switches_stop - switches_start;
  if (server_start >= 0 && server_stop >= 0) all.server_cpu_s = server_stop - server_start;
  return all;
}

}  // namespace warden_bench
