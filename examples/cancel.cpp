// cancel: a thread waits for a lock that another client holds; a second thread
// gives up on its behalf through a cancel_source. The waiter leaves nothing
// behind: no hold, no subscription.
//
//   ./cancel redis://127.0.0.1:6379
#include <warden/warden.hpp>

#include <chrono>
#include <iostream>
#include <thread>

using namespace std::chrono_literals;

int main(int argc, char** argv) {
  const char* url = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
  try {
    warden::Client holder{warden::Config::from_url(url)};
    warden::Client waiter{warden::Config::from_url(url)};
    warden::Lock held = holder.get_lock("cancel:report");
    held.lock();
    std::cout << "the holder has 'cancel:report'\n";

    warden::cancel_source source;
    std::thread waiting([&] {
      warden::Lock lock = waiter.get_lock("cancel:report");
      try {
        lock.lock(warden::lock_options().with_cancel(source.token()));  // would wait as long as the holder keeps it
        std::cout << "got it (unexpected)\n";
        lock.unlock();
      } catch (const warden::Error& error) {
        std::cout << "the wait ended: " << error.code().message() << "\n";
      }
    });

    // Say, a request's deadline passed or the service is shutting down.
    std::this_thread::sleep_for(200ms);
    source.cancel();
    waiting.join();

    held.unlock();
    std::cout << "released; nobody else took it: locked = " << std::boolalpha
              << holder.get_lock("cancel:report").is_locked() << "\n";
  } catch (const warden::Error& error) {
    std::cerr << error.what() << "\n";
    return 1;
  }
  return 0;
}
