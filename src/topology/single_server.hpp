// The topology of a Client of one Redis server (TCP, TLS or a unix socket):
// every key lives on its one node.
#pragma once

#include <memory>
#include <string>

#include "topology/node.hpp"
#include "topology/topology.hpp"

namespace warden::detail {

class SingleServer final : public Topology {
 public:
  SingleServer(EventLoop& loop, const ConnectionOptions& options, ReplicaPolicy replicas);

  void start() override { node_->start(true); }
  void close() override { node_->close(); }
  void send(Command command, std::string_view route_key, clock::time_point deadline, bool idempotent,
            Connection::Handler handler) override;
  void run_script(Command command, std::string_view route_key, clock::time_point deadline, bool idempotent,
                  Connection::Handler handler, replica_wait wait) override;
  std::shared_ptr<Node> node_for(std::string_view) override { return node_; }
  std::string describe(std::string_view) const override { return label_; }
  std::string server_of(std::string_view) override { return label_; }
  const std::string& label() const override { return label_; }
  const char* publish_command() const override { return "publish"; }
  std::uint32_t group_of(std::string_view) const override { return 0; }
  bool idle() const override { return node_->idle(); }

 private:
  std::shared_ptr<Node> node_;
  std::string label_;
};

}  // namespace warden::detail
