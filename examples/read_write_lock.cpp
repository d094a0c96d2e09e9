// read_write_lock: readers share, a writer excludes everyone, a writer may
// downgrade to a reader, and an upgrade is refused at once.
//
//   ./read_write_lock redis://127.0.0.1:6379
#include <warden/warden.hpp>

#include <chrono>
#include <iostream>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>

using namespace std::chrono_literals;

int main(int argc, char** argv) {
  const char* url = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
  try {
    warden::Client client{warden::Config::from_url(url)};
    warden::ReadWriteLock rw = client.get_read_write_lock("read_write_lock:example");
    warden::Lock read = rw.read_lock();
    warden::Lock write = rw.write_lock();

    // Runs `what` on another thread, which is another owner.
    auto elsewhere = [](auto what) { std::thread(what).join(); };

    {
      // The pair is used as std::shared_timed_mutex is: std::shared_lock takes
      // the read lock, std::unique_lock (or std::lock_guard) the write lock.
      std::shared_lock<warden::ReadWriteLock> reading(rw);
      std::cout << "main reads '" << rw.name() << "'\n";
      elsewhere([&] {
        {
          std::shared_lock<warden::ReadWriteLock> shared(rw, std::try_to_lock);
          std::cout << "  another thread may read too: " << (shared.owns_lock() ? "yes" : "no") << "\n";
        }
        std::cout << "  ... but not write: " << (write.try_lock_for(100ms) ? "it could?!" : "no") << "\n";
      });

      try {
        write.lock();  // an upgrade would wait for our own read hold for ever
      } catch (const warden::Error& error) {
        std::cout << "main asks to upgrade to writing, refused at once (" << error.code().message() << "):\n  "
                  << error.what() << "\n";
      }
    }

    write.lock();
    std::cout << "main writes; other threads can neither read nor write\n";
    elsewhere(
        [&] { std::cout << "  another thread tries to read: " << (read.try_lock() ? "got it?!" : "no") << "\n"; });
    read.lock();  // the writer may read as well
    std::cout << "main also reads (read holds " << read.hold_count() << ", write holds " << write.hold_count() << ")\n";
    write.unlock();  // downgrade: still reading, and waiting readers are woken
    std::cout << "main released the write lock and still reads: " << (read.is_held() ? "yes" : "no") << "\n";
    elsewhere([&] {
      bool shared = read.try_lock();
      std::cout << "  after the downgrade another thread may read: " << (shared ? "yes" : "no") << "\n";
      if (shared) read.unlock();
    });
    read.unlock();
    std::cout << "all released; locked for reading: " << (read.is_locked() ? "yes" : "no")
              << ", for writing: " << (write.is_locked() ? "yes" : "no") << "\n";
  } catch (const warden::Error& error) {
    std::cerr << "read_write_lock failed: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
