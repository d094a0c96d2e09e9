// The I/O of Config::eviction_guard for one node: reads the server's
// maxmemory and maxmemory-policy when the command connection is set up (so
// the answer is in before any lock command is written on it) and again
// every health-check interval, feeds the answers to the EvictionGuard, and
// says what it decides (log, Observer::on_eviction). The node asks
// refusing() before it sends an acquire. Loop thread only.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "io/connection.hpp"
#include "topology/eviction_guard.hpp"

namespace warden::detail {

class EvictionWatch {
 public:
  // `options`: the node's (mode, interval, logger, observer hook).
  EvictionWatch(EventLoop& loop, const ConnectionOptions& options, std::string server);
  ~EvictionWatch();
  EvictionWatch(const EvictionWatch&) = delete;
  EvictionWatch& operator=(const EvictionWatch&) = delete;

  // The command connection to read on; its set-up calls setup_read
  // (ConnectionOptions::setup_reads).
  void watch(Connection& commands) { commands_ = &commands; }
  std::vector<std::string> setup_read(const Response* answer);
  // No more reads, nothing more said.
  void close();

  bool refusing() const { return guard_.refusing(); }
  // What a refused acquire is told: the server, its settings, the setting.
  std::string refusal() const;

 private:
  // One read: INFO memory, then CONFIG GET when INFO is refused or lacks
  // the fields. The next command for `answer` to the step under way, or
  // an empty argv once the read is over (the machine was fed).
  // `asked`: the round's own state (0 none, 1 INFO memory asked, 2 CONFIG
  // GET asked): a set-up round and a periodic one may overlap across a
  // reconnect.
  std::vector<std::string> step(int& asked, const Response* answer);
  void read_now();
  void send_read(std::vector<std::string> argv);
  void perform(const EvictionGuard::actions& actions);
  void say(log_level level, const std::string& message, const EvictionEvent& event) const;

  EventLoop& loop_;
  std::string server_;
  warden::logger log_;
  std::function<void(const EvictionEvent&)> on_eviction_;
  EvictionGuard guard_;
  Connection* commands_ = nullptr;
  std::chrono::milliseconds interval_;
  int setup_asked_ = 0;       // the read of the connection's set-up
  int poll_asked_ = 0;        // the periodic read
  std::string info_refusal_;  // why INFO gave nothing, for the report
  std::string config_refusal_;
  MemorySettings last_{};  // what the last read said
  TimerQueue::id timer_ = 0;
  bool closed_ = false;
  // Replies of a read sent on the connection may come after close():
  // they find this gone.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace warden::detail
