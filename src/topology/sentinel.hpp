// The topology of a Client of a master watched by Redis Sentinel: every key
// lives on the master the sentinels name (SentinelResolver decides whom to
// ask and what to trust). The Client follows switches: a sentinel's
// +switch-master message, a poll every poll_interval, the master's
// connection failing, or a READONLY answer; the old master's connections are
// dropped at once (what they had not sent goes to the new master) and its
// waiters re-poll.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <warden/config.hpp>

#include "io/backoff.hpp"
#include "topology/node.hpp"
#include "topology/parked_commands.hpp"
#include "topology/sentinel_resolver.hpp"
#include "topology/topology.hpp"

namespace warden::detail {

class Sentinel final : public Topology {
 public:
  // `master`: what the master's connections use (credentials, TLS,
  // database; host and port come from the sentinels). `sentinel`: the same
  // for the sentinels' connections, with their own credentials.
  Sentinel(EventLoop& loop, ConnectionOptions master, ConnectionOptions sentinel, ReplicaPolicy replicas,
           const SentinelConfig& config, std::chrono::milliseconds command_timeout);
  ~Sentinel() override;

  void start() override;
  void close() override;
  void send(Command command, std::string_view route_key, clock::time_point deadline, bool idempotent,
            Connection::Handler handler) override;
  void run_script(Command command, std::string_view route_key, clock::time_point deadline, bool idempotent,
                  Connection::Handler handler, replica_wait wait) override;
  std::shared_ptr<Node> node_for(std::string_view) override { return master_; }
  std::string describe(std::string_view) const override { return label_; }
  std::string server_of(std::string_view) override;
  const std::string& label() const override { return label_; }
  const char* publish_command() const override { return "publish"; }
  std::uint32_t group_of(std::string_view) const override { return 0; }
  bool idle() const override;

 private:
  void dispatch(std::shared_ptr<RoutedCommand> routed);
  void answered(const std::shared_ptr<RoutedCommand>& routed, const std::shared_ptr<Node>& node, Response&& response);

  void perform(const SentinelResolver::actions& actions);
  void ask_sentinel(const SentinelResolver::ask_sentinel& step);
  void confirm_role(const SentinelResolver::confirm_role& step);
  void use_master(const NodeAddress& address);
  void retry_later(const std::string& problem);
  void poll();
  void drop_master(const std::string& why);
  // Lets go of `old` (logged): it is retired on the next loop turn.
  void retire(std::shared_ptr<Node> old, const std::string& why);
  void watch_switches(const NodeAddress& sentinel);
  void learn_sentinels(const NodeAddress& sentinel);
  Connection& sentinel_link(const NodeAddress& address);

  EventLoop& loop_;
  ConnectionOptions master_options_;
  ReplicaPolicy replicas_;
  ConnectionOptions sentinel_options_;
  SentinelConfig config_;
  std::chrono::milliseconds command_timeout_;
  std::string label_;
  SentinelResolver resolver_;

  std::shared_ptr<Node> master_;
  std::shared_ptr<Node> candidate_;                                         // named by a sentinel, asked ROLE
  std::unordered_map<std::string, std::unique_ptr<Connection>> sentinels_;  // by address
  std::unique_ptr<Connection> switches_;  // subscribed to +switch-master on one sentinel
  ParkedCommands<RoutedCommand> parked_;  // waiting for a confirmed master
  RetiringNodes retiring_;

  TimerQueue::id poll_timer_ = 0;
  TimerQueue::id retry_timer_ = 0;
  int failed_rounds_ = 0;
  Backoff retry_backoff_;
  std::error_code resolve_error_;
  std::string resolve_problem_;
  bool closed_ = false;
};

}  // namespace warden::detail
