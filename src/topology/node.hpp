// One Redis server as seen by a Client: a command connection and a
// subscriber connection. Lock code reaches nodes through the Topology and
// never assumes there is only one.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "io/backoff.hpp"
#include "io/command.hpp"
#include "io/connection.hpp"
#include "io/pubsub.hpp"
#include "io/script.hpp"
#include "io/server_links.hpp"
#include "topology/node_address.hpp"
#include "topology/replica_sync.hpp"

namespace warden::detail {

class EvictionWatch;
class SyncedWrites;

class Node final : public ServerLinks {
 public:
  // `replicas` on: lock writes sent with a replica_wait go on synced
  // connections and are followed by WAIT (see SyncedWrites).
  Node(EventLoop& loop, const ConnectionOptions& options, ReplicaPolicy replicas = {});
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  const std::string& server() const { return commands_.server(); }
  Connection& commands() override { return commands_; }

  // The subscriber connection, made on first use (and started with the
  // node). `set_sharded` before that chooses SSUBSCRIBE over SUBSCRIBE.
  PubSub& pubsub() override;
  // Whether `channel` is confirmed subscribed on the subscriber connection;
  // false (and none is made) when the node has none yet.
  bool subscribed(std::string_view channel) const override { return pubsub_ && pubsub_->subscribed(channel); }
  void set_sharded(bool sharded) { sharded_ = sharded; }

  // Starts the command connection, and the subscriber connection too when
  // `with_subscriber` (a single server: waiters find it ready).
  void start(bool with_subscriber);
  void close();
  // The node no longer serves the caller (it left the cluster, or lost its
  // slots): commands not yet written fail with Response::not_run (so that
  // the router sends them elsewhere), those in flight with connection_lost,
  // and every waiter is woken to re-poll. Then as close().
  void retire(const std::string& why);
  bool retired() const { return retired_; }
  // Nothing in flight on its connections and nobody subscribed (see
  // Connection::idle), its synced connections included (replica_sync: no
  // write or WAIT out, no ROLE asked; SyncedWrites::idle).
  bool idle() const;

  // Connection::send, plus: a reply that says the command did not run
  // (did_not_run: LOADING, BUSY, ...) is not passed on while time is left; the
  // command is sent again after a short back-off. At the deadline the handler
  // gets errc::timed_out with Response::not_run set and the last refusal.
  // A script call (EVALSHA) is sent again as EVAL on NOSCRIPT: the server
  // does not know the script (first use, SCRIPT FLUSH, a restarted server).
  // `wait` other than none, with replica_sync on: a lock write, sent on a
  // synced connection and followed by WAIT (SyncedWrites::send).
  void send(Command command, clock::time_point deadline, bool idempotent, Connection::Handler handler,
            replica_wait wait = replica_wait::none);

  // Told each time the server refuses a command as not run (TRYAGAIN,
  // CLUSTERDOWN, LOADING, ...; not NOSCRIPT), before the retry, and when the
  // subscriber's (S)SUBSCRIBE is answered MOVED: a cluster reads its slot
  // table again.
  void on_refused(std::function<void(const Reply&)> handler) { on_refused_ = std::move(handler); }

  // A cluster's ASK redirection: ASKING then the command, back to back on
  // the command connection, once. A script goes as EVAL with its body: a
  // NOSCRIPT answer would resend it without the ASKING before it.
  void send_asking(Command command, clock::time_point deadline, bool idempotent, Connection::Handler handler,
                   replica_wait wait = replica_wait::none);

 private:
  struct Attempt;
  ConnectionOptions command_options(const ConnectionOptions& options);
  void send_attempt(std::shared_ptr<Attempt> attempt);
  void fail_backing_off(const Response& response);

  EventLoop& loop_;
  ConnectionOptions options_;
  warden::logger log_;
  Backoff refused_backoff_;
  // Commands waiting out a back-off between refusals: close() fails them, as
  // the connection fails what it holds.
  std::unordered_map<TimerQueue::id, std::shared_ptr<Attempt>> backing_off_;
  Connection commands_;
  std::unique_ptr<PubSub> pubsub_;
  std::unique_ptr<SyncedWrites> synced_;     // replica_sync on
  std::unique_ptr<EvictionWatch> eviction_;  // eviction_guard on
  bool sharded_ = false;
  bool started_ = false;
  bool closed_ = false;
  bool retired_ = false;
  std::function<void(const Reply&)> on_refused_;
};

// Nodes a topology let go of, retired on the next loop turn (never from
// inside one of their own connection's callbacks), or closed with the
// topology if that comes first.
class RetiringNodes {
 public:
  explicit RetiringNodes(EventLoop& loop) : loop_(loop) {}
  void retire_next_turn(std::shared_ptr<Node> node, std::string why);
  void close_all();
  // None waits to be retired (a retirement pending keeps the loop awake).
  bool empty() const { return nodes_.empty(); }

 private:
  EventLoop& loop_;
  std::vector<std::shared_ptr<Node>> nodes_;
};

// `base` (credentials, TLS, timeouts) pointed at `address`; TLS checks the
// server against the name it is reached by unless one name was configured.
ConnectionOptions options_at(ConnectionOptions base, const NodeAddress& address);

}  // namespace warden::detail
