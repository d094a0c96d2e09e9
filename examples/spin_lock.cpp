// spin_lock: a lock whose waiters poll with back-off instead of subscribing
// to an unlock channel — for very many locks, or servers where pub/sub is not
// available. Nothing is published when it is released; a waiter notices at
// its next attempt.
//
//   ./spin_lock redis://127.0.0.1:6379
#include <warden/warden.hpp>

#include <chrono>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>

using namespace std::chrono_literals;

int main(int argc, char** argv) {
  const char* url = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
  try {
    warden::Client client{warden::Config::from_url(url)};
    // Default back-off: 1 ms, doubling up to 128 ms, with a little jitter.
    warden::SpinLock lock = client.get_spin_lock("spin_lock:report");

    lock.lock();
    std::cout << "main holds '" << lock.name() << "'; a worker polls for it" << std::endl;
    std::chrono::steady_clock::time_point released;
    std::thread worker([&] {
      auto start = std::chrono::steady_clock::now();
      bool got = lock.try_lock_for(5s);  // sleeps on the I/O thread's timers between attempts
      auto now = std::chrono::steady_clock::now();
      std::cout << "worker " << (got ? "got" : "did not get") << " the lock after "
                << std::chrono::duration_cast<std::chrono::milliseconds>(now - start).count() << " ms, "
                << std::chrono::duration_cast<std::chrono::milliseconds>(now - released).count()
                << " ms after the release (its next poll)" << std::endl;
      if (got) lock.unlock();
    });
    std::this_thread::sleep_for(500ms);
    released = std::chrono::steady_clock::now();
    lock.unlock();  // publishes nothing
    worker.join();

    // A constant back-off: one attempt every 50 ms.
    warden::SpinLock steady = client.get_spin_lock("spin_lock:report", warden::SpinBackoff::constant(50ms));
    std::cout << "constant back-off: try_lock_for(200ms) on a free lock: "
              << (steady.try_lock_for(200ms) ? "got it" : "no") << std::endl;
    steady.unlock();

    try {
      client.get_spin_lock("spin_lock:report", warden::SpinBackoff{0ms, 128ms, 2, 0ms});
    } catch (const warden::Error& error) {
      std::cout << "a back-off without delay is refused: " << error.what() << std::endl;
    }
  } catch (const warden::Error& error) {
    std::cerr << "spin_lock failed: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
