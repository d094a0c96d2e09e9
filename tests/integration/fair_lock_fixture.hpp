// FairLockTest's fixture: a server that logs every command, and readers of
// the fair queue's keys (Redisson's layout).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <future>
#include <mutex>

#include "api/access.hpp"
#include "child_process.hpp"
#include "message_recorder.hpp"
#include "redis_probe.hpp"
#include "script_log.hpp"
#include "test_env.hpp"
#include "warden_scripts.hpp"

namespace warden::test {

namespace scripts = detail::scripts;

inline std::string owner_of(const Client& client, thread_id thread) {
  return client.id() + ":" + std::to_string(thread);
}

inline std::string queue_key(const std::string& name) { return "redisson_lock_queue:{" + name + "}"; }
inline std::string timeout_key(const std::string& name) { return "redisson_lock_timeout:{" + name + "}"; }
inline std::string wake_channel(const std::string& name, const std::string& owner) {
  return "redisson_lock__channel:{" + name + "}:" + owner;
}

// The server's clock in epoch ms: what the deadlines are written in.
inline long long server_ms(RedisProbe& probe) {
  auto time = probe.command({"TIME"});
  return std::atoll(time.elements[0].str.c_str()) * 1000 + std::atoll(time.elements[1].str.c_str()) / 1000;
}

inline std::vector<std::string> queue_of(RedisProbe& probe, const std::string& name) {
  std::vector<std::string> out;
  for (auto& element : probe.command({"LRANGE", queue_key(name), "0", "-1"}).elements) out.push_back(element.str);
  return out;
}

inline std::map<std::string, long long> deadlines_of(RedisProbe& probe, const std::string& name) {
  std::map<std::string, long long> out;
  auto reply = probe.command({"ZRANGE", timeout_key(name), "0", "-1", "WITHSCORES"});
  for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
    out[reply.elements[i].str] = std::atoll(reply.elements[i + 1].str.c_str());
  }
  return out;
}

class FairLockTest : public ::testing::Test {
 protected:
  static constexpr long long wait_ms = 30'000;  // waiters re-try every 10 s at most

  Config config() {
    Config config = fast_config(server);
    config.fair_lock_wait_timeout = std::chrono::milliseconds{wait_ms};
    return config;
  }

  // Every command lands in the slow log, so tests can count script runs.
  RedisServer server{log_every_command()};
  RedisProbe probe{server};
  ScriptLog log{probe,
                {&scripts::fair_acquire, &scripts::fair_release, &scripts::fair_give_up, &scripts::fair_force_release}};
};

}  // namespace warden::test
