#include "topology/topology.hpp"

namespace warden::detail {

void Topology::probe(clock::time_point deadline, probe_done done) {
  // Routed like any key's command: it waits for what such a command waits
  // for (a connection, a master found through the sentinels), and a refusal
  // that means "not run" (LOADING, ...) is retried until the deadline.
  send(Command{"PING"}, {}, deadline, true, [done = std::move(done)](Response&& response) {
    // Any reply shows a server there that takes commands from us: an ACL
    // that forbids PING still lets a lock's scripts run.
    if (response.error) return done(response.error, describe_error(response));
    done({}, {});
  });
}

void Topology::when_publish_known(clock::time_point /*deadline*/, Connection::Handler done) {
  // A topology that knows its publish command from the start.
  done(Response{});
}

}  // namespace warden::detail
