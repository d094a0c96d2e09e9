// watchdog: hold a lock far longer than its lease and watch the watchdog
// renew it; then delete the key behind our back and see the lost-lock
// listener hear of it.
//
//   ./watchdog redis://127.0.0.1:6379
#include <warden/warden.hpp>

#include <chrono>
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <thread>

using namespace std::chrono_literals;

int main(int argc, char** argv) {
  const char* url = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
  try {
    auto config = warden::Config::from_url(url);
    config.lock_watchdog_timeout = 900ms;  // short, to see renewals quickly (renewed every 300 ms)
    warden::Client client{config};
    warden::Lock lock = client.get_lock("watchdog:example");

    std::mutex mutex;
    std::condition_variable lost_cv;
    bool lost = false;
    auto watch = lock.subscribe_lost([&](const warden::LockLost& event) {
      std::lock_guard<std::mutex> guard(mutex);
      std::cout << "lost-lock listener: " << event.message << " (" << event.cause.message() << ")\n";
      lost = true;
      lost_cv.notify_all();
    });

    lock.lock();
    std::cout << "holding '" << lock.name() << "' with a " << config.lock_watchdog_timeout.count()
              << " ms watchdog lease\n";
    for (int i = 0; i < 8; ++i) {
      std::this_thread::sleep_for(250ms);
      auto left = lock.remain_time_to_live().value_or(0ms);
      auto valid = lock.valid_for();
      std::cout << "  t=" << (i + 1) * 250 << " ms: TTL on the server " << left.count() << " ms, valid locally for "
                << valid.count() << " ms\n";
    }
    std::cout << "still held after 2 s, more than twice the lease: " << std::boolalpha << lock.is_held() << "\n";

    // Simulate losing the lock: someone deletes the key.
    std::cout << "deleting the key behind the holder's back (force_unlock)\n";
    lock.force_unlock();
    std::unique_lock<std::mutex> guard(mutex);
    if (!lost_cv.wait_for(guard, 3s, [&] { return lost; })) {
      std::cout << "no lost-lock callback within 3 s\n";
      return 1;
    }
    guard.unlock();
    std::cout << "valid locally after the loss for " << lock.valid_for().count() << " ms\n";
    // unlock() never throws; unlock_checked() says why a release failed.
    std::cout << "unlock after the loss: " << lock.unlock_checked().message() << "\n";
  } catch (const warden::Error& error) {
    std::cerr << "watchdog example failed: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
