// permit_expirable_semaphore: permits that come back on their own. A permit
// taken with a lease expires after it; one taken without a lease is kept
// alive by the watchdog while its holder lives, and comes back one lease
// after the holder dies (here: a child process that exits holding one).
// Java services using Redisson's RPermitExpirableSemaphore share the same
// permits.
//
//   ./permit_expirable_semaphore redis://127.0.0.1:6379
#include <warden/warden.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <optional>
#include <string>
#include <thread>

using namespace std::chrono_literals;

namespace {

const char* const name = "pes-example:render-slots";

warden::Config config_for(const char* url) {
  warden::Config config = warden::Config::from_url(url);
  config.lock_watchdog_timeout = 1s;  // a kept permit is renewed every 333 ms
  return config;
}

// The child: takes a permit without a lease and exits without releasing it,
// as a crashed worker would.
int crashing_holder(const char* url, int ready) {
  warden::Client client{config_for(url)};
  warden::PermitExpirableSemaphore slots = client.get_permit_expirable_semaphore(name);
  std::string id = slots.acquire();
  (void)!write(ready, id.data(), id.size());
  _exit(0);  // no release, no clean shutdown
}

}  // namespace

int main(int argc, char** argv) {
  const char* url = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
  try {
    {
      warden::Client setup{config_for(url)};
      setup.get_permit_expirable_semaphore(name).set_permits(2);  // a known count for the demo
    }

    // Fork before this process starts a Client of its own.
    int pipe_ends[2];
    if (pipe(pipe_ends) != 0) return 1;
    pid_t child = fork();
    if (child == 0) return crashing_holder(url, pipe_ends[1]);
    char id[64] = {};
    if (read(pipe_ends[0], id, sizeof id - 1) <= 0) return 1;
    waitpid(child, nullptr, 0);
    std::cout << "a worker took permit " << id << " and died holding it" << std::endl;

    warden::Client client{config_for(url)};
    warden::PermitExpirableSemaphore slots = client.get_permit_expirable_semaphore(name);
    std::cout << "free: " << slots.available_permits() << ", held: " << slots.acquired_permits() << std::endl;

    // A permit with a lease of 300 ms: nobody releases it, it expires.
    std::string leased = slots.acquire(300ms);
    std::cout << "took a permit leased for 300 ms; free now: " << slots.available_permits() << std::endl;

    // Both permits are out: a waiter sleeps until the earliest expiry or a
    // release, whichever comes first. The leased one comes back first, then
    // the dead worker's, one lease (1 s) after its last renewal.
    std::optional<std::string> first = slots.try_acquire_for(5s, 10s);
    std::cout << "a waiter got the expired leased permit: " << (first ? "yes" : "no") << std::endl;
    // No lease: this one is kept by the watchdog too.
    std::optional<std::string> second = slots.try_acquire(warden::lock_options().with_wait(5s));
    std::cout << "a waiter got the dead worker's permit back: " << (second ? "yes" : "no") << std::endl;

    // A permit taken without a lease lives while this process does.
    if (second) {
      auto lost = slots.subscribe_lost([](const warden::PermitLost& event) {
        std::cerr << "permit " << event.permit_id << " lost: " << event.message << std::endl;
      });
      std::this_thread::sleep_for(1500ms);  // longer than the lease: the watchdog keeps it
      std::cout << "our kept permit after 1.5 s: " << (slots.try_release(*second) ? "still ours" : "gone") << std::endl;
    }
    if (first) slots.release(*first);

    // An unknown id is a typed error, and nothing changes in Redis.
    try {
      slots.release("00112233445566778899aabbccddeeff");
    } catch (const warden::Error& error) {
      std::cout << "release(unknown id): " << error.code().message() << std::endl;
    }
    std::cout << "free: " << slots.available_permits() << ", held: " << slots.acquired_permits() << std::endl;
    return first && second ? 0 : 1;
  } catch (const warden::Error& error) {
    std::cerr << error.what() << std::endl;
    return 1;
  }
}
