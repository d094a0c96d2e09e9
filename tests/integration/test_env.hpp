// Shared set-up for integration tests: a Config with short timeouts pointing
// at a fixture server, and small waiting helpers.
#pragma once

#include <warden/warden.hpp>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "redis_probe.hpp"
#include "redis_server.hpp"

namespace warden::test {

using namespace std::chrono_literals;

// Built with ThreadSanitizer or AddressSanitizer (gcc's macros): the I/O
// thread runs several times slower, so a bound on its throughput (not on a
// timer's) gets room for that.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
inline constexpr bool sanitized_build = true;
#else
inline constexpr bool sanitized_build = false;
#endif

// Short timeouts so that fault tests finish quickly.
inline Config fast_config(Config config) {
  config.connect_timeout = 1s;
  config.command_timeout = 1s;
  config.retry_backoff_min = 20ms;
  config.retry_backoff_max = 200ms;
  config.health_check_interval = 500ms;
  return config;
}

inline Config fast_config(const RedisServer& server) { return fast_config(Config::from_url(server.url())); }

// Polls a condition about server state (which sends no event) until it holds
// or `timeout` passes. Returns whether it held.
inline bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout = 5s) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return condition();
}

// How many connections subscribe to `channel` right now (PUBSUB NUMSUB): a
// waiter that subscribed has found the lock taken and is parked or re-trying.
template <class Probe>
long long subscribers(Probe& probe, const std::string& channel) {
  auto reply = probe.command({"PUBSUB", "NUMSUB", channel});
  return reply.elements.size() == 2 ? reply.elements[1].integer : 0;
}

// Whether the master `probe` talks to has a replica online (INFO
// replication), waiting up to `timeout` for it.
template <class Probe>
bool replica_online(Probe& probe, std::chrono::milliseconds timeout = 10s) {
  return eventually(
      [&] {
        return probe.command({"INFO", "replication"}).str.find("state=online") != std::string::npos;
      },
      timeout);
}

// A master and one replica of it (no diskless-sync delay: it syncs at once),
// with a probe on the master. Wait for replica_online(probe) before relying
// on the replica.
struct MasterWithReplica {
  RedisServer master{std::vector<std::string>{"--repl-diskless-sync-delay", "0"}};
  RedisServer replica{std::vector<std::string>{"--replicaof", "127.0.0.1", std::to_string(master.port())}};
  RedisProbe probe{master};
};

// A one-shot event a callback can signal and a test can wait for.
class Event {
 public:
  void set() {
    std::lock_guard<std::mutex> guard(mutex_);
    set_ = true;
    cv_.notify_all();
  }
  bool wait_for(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> guard(mutex_);
    return cv_.wait_for(guard, timeout, [&] { return set_; });
  }
  bool is_set() {
    std::lock_guard<std::mutex> guard(mutex_);
    return set_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool set_ = false;
};

// A Client's log lines, for tests that look for what it said.
class Log {
 public:
  void watch(Config& config) {
    config.logger = [this](log_level, std::string_view line) {
      std::lock_guard<std::mutex> guard(mutex_);
      lines_ += std::string(line) + "\n";
    };
  }
  bool contains(const std::string& text) {
    std::lock_guard<std::mutex> guard(mutex_);
    return lines_.find(text) != std::string::npos;
  }
  std::string all() {
    std::lock_guard<std::mutex> guard(mutex_);
    return lines_;
  }

 private:
  std::mutex mutex_;
  std::string lines_;
};

// A Client of the master a group of sentinels watches, with short
// timeouts and a quick poll.
inline Config fast_sentinel_config(const std::string& url) {
  Config config = fast_config(Config::from_url(url));
  config.command_timeout = 2s;
  config.sentinel.poll_interval = 200ms;
  return config;
}

inline long long elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace warden::test
