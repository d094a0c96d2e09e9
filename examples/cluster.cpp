// cluster: locks on a Redis Cluster. The Client learns the cluster from any
// of the nodes named in the URL and sends each lock's commands to the master
// of the lock's slot; a failover or a resharding is followed on its own.
//
//   ./cluster redis+cluster://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002/
//
// It takes three locks whose names hash to different slots (usually on
// different masters) all at once, then shows a second thread woken by a
// release: on Redis 7 the waiter listens on a shard channel (SSUBSCRIBE) and
// the release publishes there (SPUBLISH), as Redisson 3.22+ does by default.
#include <warden/warden.hpp>

#include <chrono>
#include <iostream>
#include <mutex>
#include <thread>

using namespace std::chrono_literals;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " redis+cluster://host1:port1,host2:port2/\n";
    return 2;
  }
  try {
    warden::Config config = warden::Config::from_url(argv[1]);
    // Which pub/sub waiters use; every client of a lock (warden or Redisson)
    // must agree. automatic: sharded where the cluster supports it.
    config.cluster.pubsub = warden::sharded_pubsub::automatic;
    config.logger = [](warden::log_level level, std::string_view line) {
      if (level >= warden::log_level::info) std::cerr << line << "\n";
    };
    warden::Client client{config};

    // Three orders, three slots: one MultiLock takes them together (each
    // member on its own master, in parallel) or none of them.
    warden::MultiLock orders{client.get_lock("order:1001"), client.get_lock("order:1002"),
                             client.get_lock("order:1003")};
    {
      std::lock_guard<warden::MultiLock> guard{orders};
      std::cout << "held order:1001, order:1002 and order:1003 together\n";
    }

    warden::Lock invoice = client.get_lock("invoice:7");
    invoice.lock();
    std::thread second([&client] {
      warden::Lock same = client.get_lock("invoice:7");
      auto asked = std::chrono::steady_clock::now();
      std::lock_guard<warden::Lock> guard{same};
      auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - asked);
      std::cout << "a second thread waited " << waited.count() << " ms for invoice:7 and was woken by the release\n";
    });
    std::this_thread::sleep_for(200ms);  // the second thread is waiting by now
    invoice.unlock();
    second.join();
    return 0;
  } catch (const warden::Error& error) {
    std::cerr << "warden error (" << error.code().message() << "): " << error.what() << "\n";
    return 1;
  }
}
