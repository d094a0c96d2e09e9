// semaphore: at most 2 of 5 workers call a rate-limited service at once,
// across threads here and (with the same name) any other process, Java
// services using Redisson's RSemaphore included.
//
//   ./semaphore redis://127.0.0.1:6379
#include <warden/warden.hpp>

#include <atomic>
#include <chrono>
#include <iostream>
#include <mutex>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

int main(int argc, char** argv) {
  const char* url = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
  try {
    warden::Client client{warden::Config::from_url(url)};
    warden::Semaphore slots = client.get_semaphore("semaphore:partner-api");
    slots.drain_permits();  // start from a known count for the demo
    slots.add_permits(2);
    std::cout << "permits: " << slots.available_permits() << std::endl;

    std::mutex print;
    std::atomic<int> inside{0};
    std::atomic<int> most{0};
    std::vector<std::thread> workers;
    for (int w = 0; w < 5; ++w) {
      workers.emplace_back([&, w] {
        slots.acquire();  // waits on pub/sub until a release frees a permit
        int now = ++inside;
        for (int seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {
        }
        {
          std::lock_guard<std::mutex> guard(print);
          std::cout << "worker " << w << " calls the service (" << now << " inside)" << std::endl;
        }
        std::this_thread::sleep_for(50ms);  // the call
        --inside;
        slots.release();
      });
    }
    for (auto& worker : workers) worker.join();
    std::cout << "at most " << most.load() << " workers were inside at once" << std::endl;

    // A bounded wait: nothing is free while main holds both permits.
    slots.acquire(2);
    bool got = slots.try_acquire_for(200ms);
    std::cout << "try_acquire_for(200ms) with none free: " << (got ? "got one" : "timed out") << std::endl;
    slots.release(2);

    // Bad input is a typed error, and nothing changes in Redis.
    try {
      slots.release(0);
    } catch (const warden::Error& error) {
      std::cout << "release(0): " << error.code().message() << std::endl;
    }
    std::cout << "permits: " << slots.available_permits() << std::endl;
    return most.load() <= 2 ? 0 : 1;
  } catch (const warden::Error& error) {
    std::cerr << error.what() << std::endl;
    return 1;
  }
}
