// Commands a topology could not send yet (no slot table, no confirmed
// master), each kept until a route appears or its deadline passes. Both
// Cluster and Sentinel route commands this way.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "io/command.hpp"
#include "io/connection.hpp"
#include "io/event_loop.hpp"
#include "io/script.hpp"
#include "topology/node.hpp"

namespace warden::detail {

// A command on its way: kept until answered, so that it can be sent again
// when the route changes (a node that did not run it, a new master).
struct RoutedCommand {
  virtual ~RoutedCommand() = default;
  Command command;
  clock::time_point deadline;
  bool idempotent = false;
  replica_wait wait = replica_wait::none;
  Connection::Handler handler;
  int reroutes = 0;          // sent again after a node did not run it
  TimerQueue::id timer = 0;  // parked: its deadline
};

inline void prepare(RoutedCommand& routed, Command command, clock::time_point deadline, bool idempotent,
                    Connection::Handler handler, replica_wait wait = replica_wait::none) {
  routed.command = std::move(command);
  routed.deadline = deadline;
  routed.idempotent = idempotent;
  routed.wait = wait;
  routed.handler = std::move(handler);
}

template <class Command>
class ParkedCommands {
 public:
  explicit ParkedCommands(EventLoop& loop) : loop_(loop) {}

  // Keeps `command` until take_all(); should its deadline come first, it
  // leaves the list and `expired` gets it.
  void park(std::shared_ptr<Command> command, std::function<void(const std::shared_ptr<Command>&)> expired) {
    std::weak_ptr<Command> weak = command;
    command->timer = loop_.at(command->deadline, [this, weak, expired = std::move(expired)] {
      auto command = weak.lock();
      if (!command) return;
      command->timer = 0;
      auto it = std::find(parked_.begin(), parked_.end(), command);
      if (it == parked_.end()) return;
      parked_.erase(it);
      expired(command);
    });
    parked_.push_back(std::move(command));
  }

  bool empty() const { return parked_.empty(); }

  // Every parked command, in the order parked, their deadline timers off.
  std::vector<std::shared_ptr<Command>> take_all() {
    auto taken = std::move(parked_);
    parked_.clear();
    for (auto& command : taken) {
      loop_.cancel(command->timer);
      command->timer = 0;
    }
    return taken;
  }

 private:
  EventLoop& loop_;
  std::vector<std::shared_ptr<Command>> parked_;
};

// A command's response when the topology cannot send it: `error`, with
// `why` as its detail.
inline Response unroutable(std::error_code error, std::string why) {
  Response response{error, {}};
  response.detail = std::move(why);
  return response;
}

}  // namespace warden::detail
