// sentinel: a lock on the master that Redis Sentinel watches. The Client asks
// the sentinels which server is the master, checks with the server itself
// (ROLE), and follows a failover on its own: the lock below stays held while
// the sentinels promote a replica, and the release goes to the new master.
//
//   ./sentinel redis+sentinel://127.0.0.1:26379,127.0.0.1:26380/mymaster [sentinel-password]
//
// Replication is asynchronous, so by default (Config::replica_sync) every lock
// write waits until a replica has it (WAIT): a lock no replica acknowledged
// is taken back and never reported held, and a master without a replica
// refuses locks (errc::replica_sync_failed). That narrows, but does not
// close, the window in which a failover loses a hold; a hold lost anyway is
// reported to the lost-lock listener below (valid_until() is then in the
// past).
#include <warden/warden.hpp>

#include <chrono>
#include <iostream>
#include <mutex>

using namespace std::chrono_literals;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " redis+sentinel://host:26379[,host:port...]/mastername [sentinel-password]\n";
    return 2;
  }
  try {
    warden::Config config = warden::Config::from_url(argv[1]);
    if (argc > 2) config.sentinel.password = argv[2];  // the sentinels' own; the URL's are the master's
    // The default for Sentinel, said out loud: one replica must have each
    // lock write within a second (Redisson's default too).
    config.replica_sync.mode = warden::replica_sync_mode::at_least_one;
    config.replica_sync.timeout = 1s;
    config.logger = [](warden::log_level level, std::string_view line) {
      if (level >= warden::log_level::info) std::cerr << line << "\n";
    };
    warden::Client client{config};

    warden::Lock lock = client.get_lock("sentinel-example:report");
    auto listening =
        lock.subscribe_lost([](const warden::LockLost& lost) { std::cerr << "lost: " << lost.message << "\n"; });
    {
      std::lock_guard<warden::Lock> guard{lock};
      auto left = lock.valid_for();  // 0 once the hold is lost
      std::cout << "holding '" << lock.name() << "' on the master the sentinels name; valid for " << left.count()
                << " ms more, renewed every " << (config.lock_watchdog_timeout / 3).count() << " ms\n";
    }
    std::cout << "released\n";
    return 0;
  } catch (const warden::Error& error) {
    std::cerr << "warden error (" << error.code().message() << "): " << error.what() << "\n";
    return 1;
  }
}
