// fair_lock: threads that queue for a FairLock get it in the order they
// asked, and one that gives up leaves the queue.
//
//   ./fair_lock redis://127.0.0.1:6379
#include <warden/warden.hpp>

#include <chrono>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

int main(int argc, char** argv) {
  const char* url = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
  try {
    warden::Config config = warden::Config::from_url(url);
    // A waiter whose process dies holds up the queue at most this long.
    config.fair_lock_wait_timeout = 5s;
    warden::Client client{config};
    warden::FairLock lock = client.get_fair_lock("fair_lock:example");
    std::mutex print_mutex;
    auto say = [&](const std::string& line) {
      std::lock_guard<std::mutex> guard(print_mutex);
      std::cout << line << std::endl;
    };

    lock.lock();
    say("main holds '" + lock.name() + "'; four workers queue up behind it, one after another");
    std::vector<std::thread> workers;
    for (int i = 1; i <= 4; ++i) {
      workers.emplace_back([&, i] {
        std::lock_guard<warden::FairLock> guard(lock);  // each thread is its own owner
        say("  worker " + std::to_string(i) + " got the lock");
      });
      std::this_thread::sleep_for(100ms);  // let it join the queue before the next one asks
    }

    std::thread impatient([&] {
      bool got = lock.try_lock_for(200ms);
      say(std::string("  an impatient thread waited 200 ms behind the queue: ") +
          (got ? "got it?!" : "timed out and left the queue"));
      if (got) lock.unlock();
    });
    impatient.join();

    bool overtook = false;
    std::thread([&] {
      overtook = lock.try_lock();  // a single attempt never jumps the queue
      if (overtook) lock.unlock();
    }).join();
    say(std::string("a try_lock() from another thread: ") + (overtook ? "got it?!" : "refused, the queue comes first"));

    say("main releases: only the head of the queue is woken, then each release wakes the next");
    lock.unlock();
    for (auto& worker : workers) worker.join();
    say("is locked now: " + std::string(lock.is_locked() ? "yes" : "no"));
  } catch (const warden::Error& error) {
    std::cerr << "fair_lock failed: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
