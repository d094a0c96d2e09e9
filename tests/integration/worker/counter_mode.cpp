// warden-test-worker counter URL LOCK COUNTER_KEY THREADS ITERATIONS
//   THREADS threads each do ITERATIONS times, under the lock: GET the counter,
//   then SET it to the value read plus one (a non-atomic read-modify-write
//   that loses updates unless the lock excludes everyone else).
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
  if (args.size() != 5) {
    std::cerr << "counter URL LOCK COUNTER_KEY THREADS ITERATIONS\n";
    return 2;
  }
  const std::string &url = args[0], &lock_name = args[1], &key = args[2];
  int threads = std::atoi(args[3].c_str());
  int iterations = std::atoi(args[4].c_str());
  auto config = Config::from_url(url);
  Client client{config};
  std::vector<std::thread> workers;
  std::atomic<int> failures{0};
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      try {
        RedisProbe probe(config.host, config.port);
        Lock lock = client.get_lock(lock_name);
        for (int i = 0; i < iterations; ++i) {
          std::lock_guard<Lock> guard(lock);
          auto value = probe.get(key);
          long long next = (value ? std::atoll(value->c_str()) : 0) + 1;
          std::this_thread::yield();  // widen the window a lost update needs
          probe.command({"SET", key, std::to_string(next)});
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
