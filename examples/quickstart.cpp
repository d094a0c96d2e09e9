// quickstart: check that Redis is there, take a lock, check it is still
// valid before a critical write, release it, watch a second thread wait for
// its turn, and close the client.
//
//   ./quickstart redis://127.0.0.1:6379
#include <warden/warden.hpp>

#include <chrono>
#include <iostream>
#include <mutex>
#include <thread>

using namespace std::chrono_literals;

int main(int argc, char** argv) {
  const char* url = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
  try {
    warden::Client client{warden::Config::from_url(url)};
    client.wait_until_connected(5s);  // fail fast at start: throws the cause (refused, auth, TLS...)
    std::cout << "client " << client.id() << " connected to " << url << "\n";

    warden::Lock lock = client.get_lock("quickstart:orders:42");

    std::thread other;
    {
      std::lock_guard<warden::Lock> guard{lock};  // lock() ... unlock()
      std::cout << "locked '" << lock.name() << "', hold count " << lock.hold_count() << ", lease left "
                << lock.remain_time_to_live().value_or(0ms).count() << " ms (renewed by the watchdog)\n";

      // Right before a write that must not happen without the lock, check the
      // hold is known valid for longer than the write takes. valid_for() is 0
      // once the hold is lost; `lock.valid_until() - steady_clock::now() > 1s`
      // says the same.
      if (lock.valid_for() > 1s) {
        std::cout << "valid for " << lock.valid_for().count() << " ms more: safe to write\n";
      }

      lock.lock();  // re-entrant: the same thread may take it again
      std::cout << "re-entered, hold count " << lock.hold_count() << "\n";
      lock.unlock();

      other = std::thread([&] {
        bool got = lock.try_lock_for(100ms);
        std::cout << "another thread tried for 100 ms while we held it: " << (got ? "got it" : "timed out") << "\n";
        auto start = std::chrono::steady_clock::now();
        lock.lock();  // woken by the unlock message, not by polling
        auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
        std::cout << "another thread got the lock after waiting " << waited.count() << " ms\n";
        lock.unlock();
      });
      std::this_thread::sleep_for(300ms);  // some work under the lock
      std::cout << "releasing\n";
    }  // the guard unlocks here; `other` is woken and takes its turn
    other.join();

    if (lock.try_lock(warden::lock_options().with_wait(1s).with_lease(5s))) {  // fixed 5 s lease: no watchdog
      std::cout << "locked with a fixed 5 s lease, " << lock.remain_time_to_live().value_or(0ms).count()
                << " ms left\n";
      lock.unlock();
    }
    std::cout << "is locked now: " << std::boolalpha << lock.is_locked() << ", valid for " << lock.valid_for().count()
              << " ms\n";
    // unlock() never throws (it is what std::lock_guard calls); unlock_checked() says why a release failed.
    std::cout << "unlocking a lock we do not hold: " << lock.unlock_checked().message() << "\n";
    // Releases whatever is still held (nothing here) at once, rather than
    // leaving it to expire with its lease, then shuts the client down.
    client.close(2s);
  } catch (const warden::Error& error) {
    std::cerr << "quickstart failed: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
