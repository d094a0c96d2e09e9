// A separate process for multi-process tests.
//
//   warden-test-worker counter URL LOCK COUNTER_KEY THREADS ITERATIONS
//     THREADS threads each do ITERATIONS times, under the lock: GET the counter,
//     then SET it to the value read plus one (a non-atomic read-modify-write
//     that loses updates unless the lock excludes everyone else).
#include <warden/warden.hpp>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "redis_probe.hpp"

namespace {

int counter(const std::string& url, const std::string& lock_name, const std::string& key, int threads,
            int iterations) {
  auto config = warden::Config::from_url(url);
  warden::Client client{config};
  std::vector<std::thread> workers;
  std::atomic<int> failures{0};
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      try {
        warden::test::RedisProbe probe(config.host, config.port);
        warden::Lock lock = client.get_lock(lock_name);
        for (int i = 0; i < iterations; ++i) {
          std::lock_guard<warden::Lock> guard(lock);
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

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 6 && args[0] == "counter") {
    return counter(args[1], args[2], args[3], std::atoi(args[4].c_str()), std::atoi(args[5].c_str()));
  }
  std::cerr << "usage: warden-test-worker counter URL LOCK COUNTER_KEY THREADS ITERATIONS\n";
  return 2;
}
