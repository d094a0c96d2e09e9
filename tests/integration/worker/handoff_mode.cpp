// warden-test-worker handoff URL KIND NAME ROLE KEY
//   One side of a hand-off between processes, for the everyday hand-off
//   tests. KIND: lock, fair, fenced, spin, read or write (a ReadWriteLock's
//   half). Times are the steady clock's (CLOCK_MONOTONIC, one clock for every
//   process of the machine), in nanoseconds, written to Redis for the test:
//   - ROLE wait: lock(); SET KEY:got <time>; unlock().
//   - ROLE hold: lock(); SET KEY:held 1; BLPOP KEY:go (the test's signal);
//     SET KEY:start <time>; unlock(); SET KEY:unlocked <time>.
#include <warden/warden.hpp>

#include <chrono>
#include <iostream>

#include "../lock_by_kind.hpp"
#include "redis_probe.hpp"
#include "worker_modes.hpp"

namespace warden::test {
namespace {

std::string now_ns() {
  return std::to_string(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

int handoff(const std::vector<std::string>& args) {
  if (args.size() != 5 || (args[3] != "wait" && args[3] != "hold")) {
    std::cerr << "handoff URL KIND NAME wait|hold KEY\n";
    return 2;
  }
  const std::string &url = args[0], &kind = args[1], &name = args[2], &role = args[3], &key = args[4];
  try {
    auto config = Config::from_url(url);
    Client client{config};
    RedisProbe probe(config.host, config.port);
    Lock lock = lock_by_kind(client, kind, name);
    lock.lock();
    if (role == "wait") {
      probe.command({"SET", key + ":got", now_ns()});
      lock.unlock();
      return 0;
    }
    probe.command({"SET", key + ":held", "1"});
    // One second at a time: the probe's own read timeout is two.
    bool signalled = false;
    for (int second = 0; second < 30 && !signalled; ++second) {
      signalled = !probe.command({"BLPOP", key + ":go", "1"}).is_nil();
    }
    if (!signalled) throw std::runtime_error("no signal to release within 30 s");
    probe.command({"SET", key + ":start", now_ns()});
    lock.unlock();
    probe.command({"SET", key + ":unlocked", now_ns()});
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "handoff worker failed: " << error.what() << "\n";
    return 1;
  }
}

const register_worker_mode registered{"handoff", handoff};

}  // namespace
}  // namespace warden::test
