// Where a Client's commands go: one server, or the masters of a Redis
// Cluster. Lock code asks for a key's node or sends a command routed by its
// key, and never assumes which of these it talks to. Loop thread only, except
// where a member says otherwise.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "io/command.hpp"
#include "io/connection.hpp"
#include "io/script.hpp"
#include "topology/replica_sync.hpp"

namespace warden::detail {

class Node;

class Topology {
 public:
  virtual ~Topology() = default;

  // Starts connecting in the background.
  virtual void start() = 0;
  // Fails everything pending with errc::shut_down and closes every connection.
  virtual void close() = 0;

  // Sends `command` to the node serving `route_key` (the command's first
  // key), following the topology's redirections; `handler` runs once, as for
  // Node::send.
  virtual void send(Command command, std::string_view route_key, clock::time_point deadline, bool idempotent,
                    Connection::Handler handler) = 0;
  // A script call (Command::evalsha), routed by `route_key` (its first key).
  // `wait`: a lock write that waits for replicas when Config::replica_sync
  // is on (Node::send).
  virtual void run_script(Command command, std::string_view route_key, clock::time_point deadline, bool idempotent,
                          Connection::Handler handler, replica_wait wait) = 0;

  // The node serving `key` now, for its subscriber connection and its
  // connection state; nullptr when no node is known to serve it (a cluster
  // whose slot table is not read yet, or has no master for the slot). The
  // answer may change with a failover or a resharding: callers that keep the
  // node re-ask before relying on it again.
  virtual std::shared_ptr<Node> node_for(std::string_view key) = 0;

  // Where `key` goes, in words, for messages (any thread): "host:port", or
  // "cluster HOST:PORT,... slot N".
  virtual std::string describe(std::string_view key) const = 0;

  // The address of the node serving `key` now ("host:port", a socket path),
  // or describe(key) when none is known: what observer events name. Loop
  // thread.
  virtual std::string server_of(std::string_view key) = 0;

  // What the Client connects to, in words, fixed at construction (any
  // thread): "host:port", a socket path, "cluster HOST:PORT,...".
  virtual const std::string& label() const = 0;

  // The command unlock scripts publish with: "publish", or "spublish" when
  // waiters subscribe to shard channels (a cluster in sharded pub/sub mode);
  // nullptr while that is not known (a cluster that asks the servers, before
  // its first slot table). Loop thread.
  virtual const char* publish_command() const = 0;
  // Runs `done` once publish_command() is known (at once when it is), with
  // a Response without error; or, if that does not happen, with the error a
  // command sent now would get instead (no slot table by `deadline`, no node
  // gives one, shut down). It carries no command: what needs the publish
  // command is built after it. Loop thread.
  virtual void when_publish_known(clock::time_point deadline, Connection::Handler done);

  // Holds whose keys share a group may be renewed by one script: a script's
  // keys must all live in one cluster slot. 0 for a single server.
  virtual std::uint32_t group_of(std::string_view key) const = 0;
  // Readiness (Client::wait_until_connected): `done` runs once, on the loop
  // thread, with no error once the servers commands go to answer a PING:
  // the one server; a cluster's slot table is read and every master it names
  // answered; Sentinel's master is found, confirmed and answered. Else,
  // at `deadline` at the latest (at once for a cause waiting cannot cure,
  // such as refused credentials), with the cause of the last failure
  // (connection_refused, authentication_failed, tls_*, routing_failed) or
  // timed_out, and the cause in words.
  using probe_done = std::function<void(std::error_code, const std::string&)>;
  virtual void probe(clock::time_point deadline, probe_done done);

  // Loop thread: nothing in flight that a server could answer, nobody
  // subscribed, nothing waiting for a route (EventLoop::set_idle_probe):
  // the loop thread may park, and a lone blocking caller then reads its own
  // answer. What a topology does on its own clock (a cluster's slot-table
  // reads, Sentinel's polls, health checks) runs on timers, which wake the
  // parked loop thread; what it hears unasked (Sentinel's +switch-master)
  // is on a connection whose input wakes it (input_wakes_parked).
  virtual bool idle() const = 0;
};

}  // namespace warden::detail
