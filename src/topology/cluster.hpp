// The topology of a Client of a Redis Cluster: each command goes to the
// master of its first key's slot, over one command connection per master
// (made on demand), following MOVED and ASK; the slot table is read from the
// cluster at start, after every redirection or refusal that says it changed,
// while a master cannot be reached, and every refresh_interval.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <warden/config.hpp>

#include "io/backoff.hpp"
#include "topology/node.hpp"
#include "topology/parked_commands.hpp"
#include "topology/redirects.hpp"
#include "topology/slot_map.hpp"
#include "topology/topology.hpp"

namespace warden::detail {

class Cluster final : public Topology {
 public:
  // `options`: what every node's connections share (credentials, TLS,
  // timeouts); host and port are each node's own.
  Cluster(EventLoop& loop, ConnectionOptions options, ReplicaPolicy replicas, const ClusterConfig& config,
          std::chrono::milliseconds command_timeout);
  ~Cluster() override;

  void start() override;
  void close() override;
  void send(Command command, std::string_view route_key, clock::time_point deadline, bool idempotent,
            Connection::Handler handler) override;
  void run_script(Command command, std::string_view route_key, clock::time_point deadline, bool idempotent,
                  Connection::Handler handler, replica_wait wait) override;
  std::shared_ptr<Node> node_for(std::string_view key) override;
  std::string describe(std::string_view key) const override;
  std::string server_of(std::string_view key) override;
  const std::string& label() const override { return label_; }
  const char* publish_command() const override;
  void when_publish_known(clock::time_point deadline, Connection::Handler done) override;
  std::uint32_t group_of(std::string_view key) const override;
  void probe(clock::time_point deadline, probe_done done) override;
  bool idle() const override;

  // Whether waiters use shard channels; known once the first slot table is in.
  std::optional<bool> sharded() const { return sharded_; }

 private:
  struct Routed;
  void dispatch(std::shared_ptr<Routed> routed);
  void answered(const std::shared_ptr<Routed>& routed, const NodeAddress& from, Response&& response);
  void park(std::shared_ptr<Routed> routed);

  std::shared_ptr<Node> node_at(const NodeAddress& address);
  void node_event(const ConnectionEvent& event);

  // A MOVED (`reply`) patched the table: keep its word over tables read in
  // the next moments (see moved_trust in cluster.cpp).
  void learnt_moved(const Reply& reply);
  // Reads the slot table again `after` from now (at once: 0), unless a read
  // is due sooner; reads asked for while one runs make it run again after.
  void refresh_in(std::chrono::milliseconds after);
  void refresh();
  void ask_for_slots(std::vector<NodeAddress> candidates, std::size_t next, std::string problems, bool answered);
  void got_slots(SlotMap map, const NodeAddress& from);
  void install(SlotMap map);
  void refresh_failed(const std::string& problems, bool every_node_answered);
  void refresh_done();

  EventLoop& loop_;
  ConnectionOptions options_;
  ReplicaPolicy replicas_;
  ClusterConfig config_;
  std::chrono::milliseconds command_timeout_;
  std::string label_;
  std::vector<NodeAddress> seeds_;

  std::optional<SlotMap> map_;
  std::map<std::string, std::shared_ptr<Node>> nodes_;  // by NodeAddress::to_string()
  ParkedCommands<Routed> parked_;                       // waiting for a table that serves their slot
  RetiringNodes retiring_;
  std::optional<bool> sharded_;
  // Slots whose owner a MOVED told, and when.
  struct MovedNote {
    NodeAddress to;
    clock::time_point at;
  };
  std::map<std::uint16_t, MovedNote> moved_;
  bool behind_ = false;  // the last table installed was behind a MOVED

  TimerQueue::id refresh_timer_ = 0;
  clock::time_point refresh_at_{};
  bool refreshing_ = false;
  bool refresh_again_ = false;
  int failed_refreshes_ = 0;
  Backoff refresh_backoff_;
  // Why the last read of the table failed, for commands that wait in vain.
  std::error_code refresh_error_;
  std::string refresh_problem_;
  bool closed_ = false;
};

}  // namespace warden::detail
