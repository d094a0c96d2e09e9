// red_lock: one lock over three independent Redis servers (the Redlock
// algorithm). Start three servers, e.g.
//
//   redis-server --port 7001 --save '' & redis-server --port 7002 --save '' &
//   redis-server --port 7003 --save '' &
//   ./red_lock redis://127.0.0.1:7001 redis://127.0.0.1:7002 redis://127.0.0.1:7003
//
// then run it again with one of the servers stopped (it still locks: 2 of 3
// is a majority), and with two stopped (a quorum error naming every node).
#include <warden/warden.hpp>

#include <chrono>
#include <iostream>
#include <memory>
#include <vector>

using namespace std::chrono_literals;

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: red_lock URL1 URL2 URL3\n";
    return 2;
  }
  try {
    // One Client per server: the nodes are independent masters.
    std::vector<std::unique_ptr<warden::Client>> clients;
    std::vector<warden::Lock> nodes;
    for (int i = 1; i <= 3; ++i) {
      auto config = warden::Config::from_url(argv[i]);
      config.command_timeout = 1s;  // a dead node costs at most this per round
      clients.push_back(std::make_unique<warden::Client>(config));
      nodes.push_back(clients.back()->get_lock("red:invoice:7"));
    }
    warden::RedLock lock{nodes};
    auto lost =
        lock.subscribe_lost([](const warden::LockLost& event) { std::cout << "lost: " << event.message << "\n"; });

    auto start = std::chrono::steady_clock::now();
    if (!lock.try_lock(warden::lock_options().with_wait(2s).with_lease(10s))) {
      std::cout << "another owner holds a majority of the nodes\n";
      return 0;
    }
    auto now = std::chrono::steady_clock::now();
    std::cout << "locked on a majority (" << lock.quorum() << " of 3 needed) in "
              << std::chrono::duration_cast<std::chrono::milliseconds>(now - start).count() << " ms; valid for "
              << lock.valid_for().count() << " ms more (10 s lease - elapsed - drift)\n";
    // Before a write that must not happen without the lock, check the bound
    // (valid_for() is 0 once the majority's validity has run out):
    if (lock.valid_for() > 100ms) {
      std::cout << "enough validity left for a 100 ms write\n";
    }
    lock.unlock();
    std::cout << "unlocked on every node\n";
  } catch (const warden::Error& error) {
    // errc::quorum_not_reached: what() names each node's server and cause.
    std::cerr << "red_lock failed: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
