// One Redis server as seen by a Client: a command connection and a
// subscriber connection. Lock code asks the Client for the node of a key and
// never assumes there is only one.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "io/backoff.hpp"
#include "io/connection.hpp"
#include "io/pubsub.hpp"
#include "topology/script.hpp"

namespace warden::detail {

class Node {
 public:
  Node(EventLoop& loop, const ConnectionOptions& options);

  const std::string& server() const { return commands_.server(); }
  Connection& commands() { return commands_; }
  PubSub& pubsub() { return pubsub_; }

  void start();
  void close();

  // Connection::send, plus: a reply that says the command did not run
  // (did_not_run: LOADING, BUSY, ...) is not passed on while time is left; the
  // command is sent again after a short back-off. At the deadline the handler
  // gets errc::timed_out with Response::not_run set and the last refusal.
  void send(std::vector<std::string> argv, clock::time_point deadline, bool idempotent, Connection::Handler handler);

  // EVALSHA, falling back to EVAL when the server does not know the script
  // (first use, SCRIPT FLUSH, a restarted server); retried like send() while
  // the server refuses to run it.
  void run_script(const Script& script, const std::vector<std::string>& keys, const std::vector<std::string>& args,
                  clock::time_point deadline, bool idempotent, Connection::Handler handler);

 private:
  struct Attempt;
  void send_attempt(std::shared_ptr<Attempt> attempt);

  EventLoop& loop_;
  warden::logger log_;
  Backoff refused_backoff_;
  // Commands waiting out a back-off between refusals: close() fails them, as
  // the connection fails what it holds.
  std::unordered_map<TimerQueue::id, std::shared_ptr<Attempt>> backing_off_;
  Connection commands_;
  PubSub pubsub_;
};

}  // namespace warden::detail
