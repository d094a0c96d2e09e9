// warden-test-worker fair URL LOCK ORDER_KEY ID WAIT_TIMEOUT_MS
//   Waits (lock(), no time limit) for the fair lock LOCK with
//   Config::fair_lock_wait_timeout = WAIT_TIMEOUT_MS, then RPUSHes ID to
//   ORDER_KEY, unlocks and exits 0. Tests start several to check the order in
//   which they are served, or SIGKILL one while it is queued.
#include <warden/warden.hpp>

#include <cstdlib>
#include <iostream>

#include "redis_probe.hpp"
#include "worker_modes.hpp"

namespace warden::test {
namespace {

int fair(const std::vector<std::string>& args) {
  if (args.size() != 5) {
    std::cerr << "fair URL LOCK ORDER_KEY ID WAIT_TIMEOUT_MS\n";
    return 2;
  }
  const std::string &url = args[0], &lock_name = args[1], &order_key = args[2], &id = args[3];
  try {
    auto config = Config::from_url(url);
    config.fair_lock_wait_timeout = std::chrono::milliseconds{std::atoll(args[4].c_str())};
    Client client{config};
    RedisProbe probe(config.host, config.port);
    FairLock lock = client.get_fair_lock(lock_name);
    lock.lock();
    probe.command({"RPUSH", order_key, id});
    lock.unlock();
  } catch (const std::exception& error) {
    std::cerr << "fair worker " << id << " failed: " << error.what() << "\n";
    return 1;
  }
  return 0;
}

const register_worker_mode registered{"fair", fair};

}  // namespace
}  // namespace warden::test
