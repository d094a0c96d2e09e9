#include "topology/single_server.hpp"

namespace warden::detail {

SingleServer::SingleServer(EventLoop& loop, const ConnectionOptions& options, ReplicaPolicy replicas)
    : node_(std::make_shared<Node>(loop, options, replicas)), label_(node_->server()) {}

void SingleServer::send(Command command, std::string_view, clock::time_point deadline, bool idempotent,
                        Connection::Handler handler) {
  node_->send(std::move(command), deadline, idempotent, std::move(handler));
}

void SingleServer::run_script(Command command, std::string_view, clock::time_point deadline, bool idempotent,
                              Connection::Handler handler, replica_wait wait) {
  node_->send(std::move(command), deadline, idempotent, std::move(handler), wait);
}

}  // namespace warden::detail
