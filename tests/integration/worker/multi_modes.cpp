// warden-test-worker multi-crossed URL_A URL_B ORDER PREFIX ITERATIONS
//   Lock PREFIX:a lives on URL_A, lock PREFIX:b on URL_B (two servers, so that
//   the members' replies race); ORDER "ab" or "ba" lists them in the MultiLock.
//   ITERATIONS times, under the MultiLock: claim PREFIX:inside on URL_A (SET NX;
//   a claim already there means two holders overlapped, counted in
//   PREFIX:violations), GET PREFIX:counter, SET it to the value read plus one,
//   drop the claim. Two workers with opposite orders must both finish.
#include <warden/warden.hpp>

#include <cstdlib>
#include <iostream>
#include <mutex>
#include <thread>

#include "redis_probe.hpp"
#include "worker_modes.hpp"

namespace warden::test {
namespace {

Config short_timeouts(const std::string& url) {
  auto config = Config::from_url(url);
  config.command_timeout = std::chrono::seconds(1);
  config.connect_timeout = std::chrono::seconds(1);
  return config;
}

int multi_crossed(const std::vector<std::string>& args) {
  if (args.size() != 5 || (args[2] != "ab" && args[2] != "ba")) {
    std::cerr << "multi-crossed URL_A URL_B ab|ba PREFIX ITERATIONS\n";
    return 2;
  }
  const std::string &order = args[2], &prefix = args[3];
  int iterations = std::atoi(args[4].c_str());
  try {
    auto config_a = short_timeouts(args[0]);
    Client client_a{config_a};
    Client client_b{short_timeouts(args[1])};
    RedisProbe probe(config_a.host, config_a.port);
    Lock a = client_a.get_lock(prefix + ":a");
    Lock b = client_b.get_lock(prefix + ":b");
    MultiLock multi = order == "ab" ? MultiLock{a, b} : MultiLock{b, a};
    for (int i = 0; i < iterations; ++i) {
      std::lock_guard<MultiLock> guard(multi);
      if (probe.command({"SET", prefix + ":inside", "1", "NX"}).is_nil()) {
        probe.command({"INCR", prefix + ":violations"});
      }
      auto value = probe.get(prefix + ":counter");
      long long next = (value ? std::atoll(value->c_str()) : 0) + 1;
      std::this_thread::yield();  // widen the window an overlap needs
      probe.command({"SET", prefix + ":counter", std::to_string(next)});
      probe.command({"DEL", prefix + ":inside"});
    }
  } catch (const std::exception& error) {
    std::cerr << "multi-crossed failed: " << error.what() << "\n";
    return 1;
  }
  return 0;
}

const register_worker_mode registered{"multi-crossed", multi_crossed};

}  // namespace
}  // namespace warden::test
