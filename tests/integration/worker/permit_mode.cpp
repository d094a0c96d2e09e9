// warden-test-worker pes_hold URL NAME LEASE_MS KEY
//   Holds one permit of the PermitExpirableSemaphore NAME, taken without a
//   lease, so that its Client's watchdog (Config::lock_watchdog_timeout =
//   LEASE_MS) keeps it: SET KEY:held <permit id>, then waits (up to 60 s)
//   for the test to kill it. It never releases: the test kills it with
//   SIGKILL and watches the permit come back.
#include <warden/warden.hpp>

#include <chrono>
#include <iostream>

#include "redis_probe.hpp"
#include "worker_modes.hpp"

namespace warden::test {
namespace {

int pes_hold(const std::vector<std::string>& args) {
  if (args.size() != 4) {
    std::cerr << "pes_hold URL NAME LEASE_MS KEY\n";
    return 2;
  }
  const std::string &url = args[0], &name = args[1], &key = args[3];
  try {
    auto config = Config::from_url(url);
    config.lock_watchdog_timeout = std::chrono::milliseconds{std::stoll(args[2])};
    Client client{config};
    RedisProbe probe(config.host, config.port);
    auto id = client.get_permit_expirable_semaphore(name).acquire();
    probe.command({"SET", key + ":held", id});
    // One second at a time: the probe's own read timeout is two. The key is
    // never pushed: the test ends this process first.
    for (int second = 0; second < 60; ++second) probe.command({"BLPOP", key + ":never", "1"});
    return 3;
  } catch (const std::exception& error) {
    std::cerr << "pes_hold worker failed: " << error.what() << "\n";
    return 1;
  }
}

const register_worker_mode registered("pes_hold", pes_hold);

}  // namespace
}  // namespace warden::test
