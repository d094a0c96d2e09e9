// One Redis server as seen by a Client: a command connection and a
// subscriber connection. Lock code asks the Client for the node of a key and
// never assumes there is only one.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "connection.hpp"
#include "pubsub.hpp"
#include "script.hpp"

namespace warden::detail {

class Node {
 public:
  Node(EventLoop& loop, const ConnectionOptions& options);

  const std::string& server() const { return commands_.server(); }
  Connection& commands() { return commands_; }
  PubSub& pubsub() { return pubsub_; }

  void start();
  void close();

  // EVALSHA, falling back to EVAL when the server does not know the script
  // (first use, SCRIPT FLUSH, a restarted server). NOSCRIPT means the script
  // did not run, so the fallback is safe even for non-idempotent scripts.
  void run_script(const Script& script, const std::vector<std::string>& keys, const std::vector<std::string>& args,
                  clock::time_point deadline, bool idempotent, Connection::Handler handler);

 private:
  Connection commands_;
  PubSub pubsub_;
};

}  // namespace warden::detail
