// What the tests of warden's own link share (the link_*_test.cpp files): a
// log recorder, an EventLoop harness that owns Connections and PubSubs,
// options for a test server, a waiter on one channel, and small probes.
#pragma once

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "io/connection.hpp"
#include "io/event_loop.hpp"
#include "io/pubsub.hpp"
#include "lock/wake_policy.hpp"
#include "redis_probe.hpp"
#include "redis_server.hpp"
#include "test_env.hpp"

namespace warden::test {

using detail::Connection;
using detail::ConnectionOptions;
using detail::EventLoop;
using detail::PubSub;
using detail::Response;
using steady = std::chrono::steady_clock;

// What the code under test logged, for assertions. Called on the loop thread,
// read from the test thread.
class LogRecorder {
 public:
  warden::logger logger() {
    return [this](log_level, std::string_view message) {
      std::lock_guard<std::mutex> guard(mutex_);
      lines_.emplace_back(message);
    };
  }
  bool contains(const std::string& text) const {
    std::lock_guard<std::mutex> guard(mutex_);
    for (const auto& line : lines_) {
      if (line.find(text) != std::string::npos) return true;
    }
    return false;
  }
  std::string all() const {
    std::lock_guard<std::mutex> guard(mutex_);
    std::string out;
    for (const auto& line : lines_) out += line + "\n";
    return out;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> lines_;
};

// Counts callbacks (on the loop thread) and lets the test wait for the n-th.
class Counter {
 public:
  void add() {
    std::lock_guard<std::mutex> guard(mutex_);
    ++count_;
    cv_.notify_all();
  }
  int value() {
    std::lock_guard<std::mutex> guard(mutex_);
    return count_;
  }
  bool wait_for_at_least(int n, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> guard(mutex_);
    return cv_.wait_for(guard, timeout, [&] { return count_ >= n; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int count_ = 0;
};

// An EventLoop and the connections and subscribers living on it. They are
// made, used and destroyed on the loop thread only, as in the library.
class LoopHarness {
 public:
  LoopHarness() = default;
  ~LoopHarness() {
    loop_.stop([this] {
      for (auto& pubsub : pubsubs_) pubsub->close();
      pubsubs_.clear();
      connections_.clear();
    });
  }
  LoopHarness(const LoopHarness&) = delete;
  LoopHarness& operator=(const LoopHarness&) = delete;

  EventLoop& loop() { return loop_; }

  // Runs `fn` on the loop thread and returns its result once it has run.
  template <class F>
  auto run(F fn) -> decltype(fn()) {
    using result = decltype(fn());
    auto task = std::make_shared<std::packaged_task<result()>>(std::move(fn));
    auto done = task->get_future();
    if (!loop_.post([task] { (*task)(); })) throw std::logic_error("the loop is stopping");
    return done.get();
  }

  // A started connection; `ready` (if given) counts its (re)connects.
  Connection& connection(ConnectionOptions options, Counter* ready = nullptr) {
    return run([&]() -> Connection& {
      connections_.push_back(std::make_unique<Connection>(loop_, std::move(options)));
      Connection& connection = *connections_.back();
      if (ready != nullptr) connection.on_ready([ready] { ready->add(); });
      connection.start();
      return connection;
    });
  }

  PubSub& pubsub(ConnectionOptions options, bool sharded) {
    return run([&]() -> PubSub& {
      pubsubs_.push_back(std::make_unique<PubSub>(loop_, std::move(options), sharded));
      pubsubs_.back()->start();
      return *pubsubs_.back();
    });
  }

  // Sends one command from the loop thread; the future holds its response.
  std::future<Response> send(Connection& connection, std::vector<std::string> argv, std::chrono::milliseconds budget,
                             bool idempotent) {
    auto promise = std::make_shared<std::promise<Response>>();
    auto response = promise->get_future();
    run([&] {
      connection.send(std::move(argv), steady::now() + budget, idempotent,
                      [promise](Response&& r) { promise->set_value(std::move(r)); });
    });
    return response;
  }

  // Returns once everything queued on the loop so far has run and the output
  // of the turns before has been handed to the sockets.
  void sync() {
    run([] {});
  }

 private:
  EventLoop loop_;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::vector<std::unique_ptr<PubSub>> pubsubs_;
};

inline ConnectionOptions options_for(const RedisServer& server, LogRecorder& log,
                                     connection_role role = connection_role::command) {
  ConnectionOptions options;
  options.host = server.host();
  options.port = server.port();
  options.connect_timeout = 1s;
  options.health_check_interval = 10s;  // tests that probe the health check set their own
  options.backoff_min = 20ms;
  options.backoff_max = 100ms;
  options.role = role;
  options.log = log.logger();
  return options;
}

// Waits for a response; a future that is not ready in time fails the test
// instead of hanging it.
inline ::testing::AssertionResult ready_within(std::future<Response>& response, std::chrono::milliseconds timeout) {
  if (response.wait_for(timeout) == std::future_status::ready) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "no response within " << timeout.count() << " ms";
}

inline std::string describe(const Response& response) {
  if (response.error) return "error " + response.error.message();
  return "reply '" + response.reply.str.substr(0, 200) + "' (integer " + std::to_string(response.reply.integer) + ")";
}

// The ids of the server's clients in pub/sub mode, from CLIENT LIST.
inline std::vector<std::string> pubsub_client_ids(RedisProbe& probe) {
  std::vector<std::string> ids;
  std::istringstream lines(probe.command({"CLIENT", "LIST", "TYPE", "pubsub"}).str);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("id=", 0) != 0) continue;
    ids.push_back(line.substr(3, line.find(' ') - 3));
  }
  return ids;
}

// A field of INFO commandstats, e.g. ("ssubscribe", "rejected_calls").
inline long long command_stat(RedisProbe& probe, const std::string& command, const std::string& field) {
  std::istringstream lines(probe.command({"INFO", "commandstats"}).str);
  const std::string prefix = "cmdstat_" + command + ":";
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    auto at = line.find(field + "=", prefix.size());
    return at == std::string::npos ? 0 : std::atoll(line.c_str() + at + field.size() + 1);
  }
  return 0;
}

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it.
class TempDirectory {
 public:
  explicit TempDirectory(const std::string& prefix) {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/" + prefix + "XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (mkdtemp(buffer.data()) == nullptr) throw std::system_error(errno, std::generic_category(), "mkdtemp");
    path_ = buffer.data();
  }
  ~TempDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDirectory(const TempDirectory&) = delete;
  TempDirectory& operator=(const TempDirectory&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A loopback port nobody listens on right now (the kernel's choice).
inline std::uint16_t free_port() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    int error = errno;
    close(fd);
    throw std::system_error(error, std::generic_category(), "bind");
  }
  close(fd);
  return ntohs(address.sin_port);
}

// One waiter on one channel: joins, is confirmed, parks; counts its wake-ups.
struct Waiter {
  Counter ready;
  Counter woken;
  std::uint64_t id = 0;

  void join(LoopHarness& harness, PubSub& pubsub, const std::string& channel) {
    id = harness.run([&] {
      return pubsub.join(
          channel, [this] { ready.add(); }, [this](wake_cause) { woken.add(); }, detail::lock_wake_policy());
    });
  }
  // False when a wake-up was owed and the waiter should re-try at once.
  bool park(LoopHarness& harness, PubSub& pubsub, const std::string& channel) {
    return !harness.run([&] { return pubsub.park(channel, id); });
  }
};

}  // namespace warden::test
