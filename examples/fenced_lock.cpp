// fenced_lock: what a fencing token is for. A holder that is paused past its
// lease wakes up still believing it holds the lock; another holder has taken
// it meanwhile. The lock cannot stop the stale holder's late write — the
// storage can, by refusing a token lower than the highest it has accepted.
//
//   ./fenced_lock redis://127.0.0.1:6379
#include <warden/warden.hpp>

#include <chrono>
#include <cstdint>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>

using namespace std::chrono_literals;

// The protected resource. A real one does the same check atomically with the
// write (a conditional UPDATE ... WHERE last_token < :token, a compare-and-set,
// a Lua script next to the data); the check is the resource's job, not the lock's.
class FencedStore {
 public:
  bool write(std::int64_t token, const std::string& value) {
    std::lock_guard<std::mutex> guard(mutex_);
    if (token <= last_token_) return false;  // an older holder: refused
    last_token_ = token;
    value_ = value;
    return true;
  }
  std::string value() {
    std::lock_guard<std::mutex> guard(mutex_);
    return value_;
  }

 private:
  std::mutex mutex_;
  std::int64_t last_token_ = 0;
  std::string value_;
};

int main(int argc, char** argv) {
  const char* url = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
  try {
    warden::Client client{warden::Config::from_url(url)};
    warden::FencedLock lock = client.get_fenced_lock("fenced_lock:invoice-7");
    FencedStore store;
    std::mutex print_mutex;
    auto say = [&](const std::string& line) {
      std::lock_guard<std::mutex> guard(print_mutex);
      std::cout << line << std::endl;
    };

    std::thread slow([&] {
      // A fixed 500 ms lease, then a "GC pause" of 1.5 s before the write.
      std::int64_t token = lock.lock_and_get_token(warden::lock_options().with_lease(500ms));
      say("slow worker holds the lock with token " + std::to_string(token) + ", then stalls for 1.5 s");
      std::this_thread::sleep_for(1500ms);
      bool still_valid = lock.valid_for() > 0ms;
      say(std::string("slow worker wakes; valid_for() says its hold is ") + (still_valid ? "valid" : "gone") +
          ", but it writes anyway (as a pause between the check and the write would)");
      bool accepted = store.write(token, "written by the slow worker");
      say("  its write with token " + std::to_string(token) + ": " + (accepted ? "accepted?!" : "refused as stale"));
      lock.unlock();  // reports the lost hold to the logger; never throws
    });

    std::this_thread::sleep_for(800ms);  // the slow worker's lease has run out
    std::int64_t token = lock.lock_and_get_token();
    say("fast worker gets the lock with token " + std::to_string(token));
    bool accepted = store.write(token, "written by the fast worker");
    say("  its write with token " + std::to_string(token) + ": " + (accepted ? "accepted" : "refused?!"));
    lock.unlock();
    slow.join();

    say("the store holds: '" + store.value() + "'; the lock's latest token is " + std::to_string(lock.token()) +
        " (the counter redisson_lock_token:{" + lock.name() + "} stays in Redis)");
  } catch (const warden::Error& error) {
    std::cerr << "fenced_lock failed: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
