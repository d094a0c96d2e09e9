// warden-test-worker counter URL LOCK COUNTER_KEY THREADS ITERATIONS [KIND]
//   THREADS threads each do ITERATIONS times, under the lock: GET the counter,
//   then SET it to the value read plus one (a non-atomic read-modify-write
//   that loses updates unless the lock excludes everyone else).
//   KIND: lock (default), spin (a SpinLock), or fenced (a FencedLock; each
//   write is also fenced: the hold's token must be above the one stored in
//   COUNTER_KEY:last-token, which it then replaces, else the worker fails).
#include <warden/warden.hpp>

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <thread>

#include "redis_probe.hpp"
#include "worker_modes.hpp"

namespace warden::test {
namespace {

int counter(const std::vector<std::string>& args) {
  if (args.size() != 5 && args.size() != 6) {
    std::cerr << "counter URL LOCK COUNTER_KEY THREADS ITERATIONS [lock|spin|fenced]\n";
    return 2;
  }
  const std::string &url = args[0], &lock_name = args[1], &key = args[2];
  int threads = std::atoi(args[3].c_str());
  int iterations = std::atoi(args[4].c_str());
  const std::string kind = args.size() == 6 ? args[5] : "lock";
  auto config = Config::from_url(url);
  Client client{config};
  std::vector<std::thread> workers;
  std::atomic<int> failures{0};
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      try {
        RedisProbe probe(config.host, config.port);
        auto add_one = [&] {
          auto value = probe.get(key);
          long long next = (value ? std::atoll(value->c_str()) : 0) + 1;
          std::this_thread::yield();  // widen the window a lost update needs
          probe.command({"SET", key, std::to_string(next)});
        };
        if (kind == "fenced") {
          FencedLock lock = client.get_fenced_lock(lock_name);
          for (int i = 0; i < iterations; ++i) {
            auto token = lock.lock_and_get_token();
            std::lock_guard<FencedLock> guard(lock, std::adopt_lock);
            auto last = probe.get(key + ":last-token");
            if (last && std::atoll(last->c_str()) >= token) {
              std::cerr << "token " << token << " is not above the last one written, " << *last << "\n";
              ++failures;
            }
            probe.command({"SET", key + ":last-token", std::to_string(token)});
            add_one();
          }
          return;
        }
        Lock lock = kind == "spin" ? client.get_spin_lock(lock_name) : client.get_lock(lock_name);
        for (int i = 0; i < iterations; ++i) {
          std::lock_guard<Lock> guard(lock);
          add_one();
        }
      } catch (const std::exception& error) {
        std::cerr << "worker thread failed: " << error.what() << "\n";
        ++failures;
      }
    });
  }
  for (auto& worker : workers) worker.join();
  return failures == 0 ? 0 : 1;
}

const register_worker_mode registered{"counter", counter};

}  // namespace
}  // namespace warden::test
