#include "topology/cluster.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <set>
#include <variant>

#include <warden/error.hpp>

#include "topology/key_slot.hpp"

namespace warden::detail {
namespace {

// While a master cannot be reached, the table is read this often, so that a
// failover is followed within a fraction of a second of the cluster's own
// decision rather than at the next periodic read.
constexpr std::chrono::milliseconds troubled_refresh{250};

// How long a node that is not connected gets to answer CLUSTER SLOTS before
// the next one is asked.
constexpr std::chrono::milliseconds unconnected_answer{1'000};

// How long a slot's owner learnt from a MOVED outranks slot tables that say
// otherwise. The node that answered MOVED knew of the change; a table read
// meanwhile may come from a node the cluster's gossip has not reached yet
// (milliseconds after a failover or a resharding), and installing it would
// send the slot's commands back, let go of the new owner and fail what was
// sent there, in a loop that spends a command's redirections at once. Short,
// because a MOVED that no table confirms may itself be old news.
constexpr std::chrono::milliseconds moved_trust{1'000};

std::string uncovered_text(const SlotMap& map) {
  auto ranges = map.uncovered();
  std::string out;
  std::size_t shown = 0;
  for (const auto& range : ranges) {
    if (shown++ == 4) {
      out += fmt::format(", and {} more", ranges.size() - 4);
      break;
    }
    if (!out.empty()) out += ", ";
    out += range.first == range.last ? std::to_string(range.first) : fmt::format("{}-{}", range.first, range.last);
  }
  return out;
}

}  // namespace

// One command until it is answered: where it goes, and what it may still do.
struct Cluster::Routed : RoutedCommand {
  explicit Routed(int max_redirects) : redirects(max_redirects) {}
  std::uint16_t slot = 0;
  // No command: a wait for the publish command (when_publish_known), which
  // is known once a slot table is (got_slots() learns both together).
  bool publish_wait = false;
  Redirects redirects;
  std::optional<NodeAddress> ask;  // the next send is ASKING + the command, there
};

Cluster::Cluster(EventLoop& loop, ConnectionOptions options, ReplicaPolicy replicas, const ClusterConfig& config,
                 std::chrono::milliseconds command_timeout)
    : loop_(loop),
      options_(std::move(options)),
      replicas_(replicas),
      config_(config),
      command_timeout_(command_timeout),
      parked_(loop),
      retiring_(loop),
      refresh_backoff_(std::chrono::milliseconds{50}, std::chrono::milliseconds{2'000}, std::random_device{}()) {
  label_ = "cluster ";
  for (std::size_t i = 0; i < config_.seeds.size(); ++i) {
    NodeAddress seed{config_.seeds[i].host, config_.seeds[i].port};
    label_ += (i == 0 ? "" : ",") + seed.to_string();
    seeds_.push_back(std::move(seed));
  }
  if (config_.pubsub == sharded_pubsub::on) sharded_ = true;
  if (config_.pubsub == sharded_pubsub::off) sharded_ = false;
  // The user's connection hook still hears every event; the router also
  // reads the table again when a node's command connection fails.
  options_.on_event = [user = std::move(options_.on_event), this](const ConnectionEvent& event) {
    if (user) user(event);
    node_event(event);
  };
}

Cluster::~Cluster() { close(); }

void Cluster::start() { refresh(); }

void Cluster::close() {
  if (closed_) return;
  closed_ = true;
  loop_.cancel(refresh_timer_);
  refresh_timer_ = 0;
  for (auto& routed : parked_.take_all()) routed->handler(Response{make_error_code(errc::shut_down), {}});
  auto nodes = std::move(nodes_);
  nodes_.clear();
  for (auto& [address, node] : nodes) node->close();
  retiring_.close_all();
}

// ---- routing

void Cluster::send(Command command, std::string_view route_key, clock::time_point deadline, bool idempotent,
                   Connection::Handler handler) {
  auto routed = std::make_shared<Routed>(config_.max_redirects);
  prepare(*routed, std::move(command), deadline, idempotent, std::move(handler));
  routed->slot = keys::slot(route_key);
  dispatch(std::move(routed));
}

void Cluster::run_script(Command command, std::string_view route_key, clock::time_point deadline, bool idempotent,
                         Connection::Handler handler, replica_wait wait) {
  auto routed = std::make_shared<Routed>(config_.max_redirects);
  routed->slot = keys::slot(route_key);
  prepare(*routed, std::move(command), deadline, idempotent, std::move(handler), wait);
  dispatch(std::move(routed));
}

void Cluster::when_publish_known(clock::time_point deadline, Connection::Handler done) {
  if (sharded_ || closed_) return done(Response{closed_ ? make_error_code(errc::shut_down) : std::error_code{}, {}});
  // Parked as a command would be: it leaves with the first table, or fails
  // as the commands parked beside it do.
  auto routed = std::make_shared<Routed>(config_.max_redirects);
  prepare(*routed, Command{}, deadline, true, std::move(done));
  routed->publish_wait = true;
  dispatch(std::move(routed));
}

void Cluster::probe(clock::time_point deadline, probe_done done) {
  // The first PING (routed to slot 0's master) waits for a slot table; then
  // every master it names must answer, since a lock may live on any of them,
  // and a PING to each uncovered slot waits for a master to serve it.
  Topology::probe(deadline, [this, deadline, done = std::move(done)](std::error_code error, const std::string& why) {
    if (error) return done(error, why);
    if (closed_ || !map_) return done(make_error_code(errc::shut_down), "the client is shut down");
    struct Tally {
      std::size_t left = 0;
      std::error_code error;
      std::string why;
      probe_done done;
    };
    auto tally = std::make_shared<Tally>();
    tally->done = std::move(done);
    auto answered = [tally](std::string where) {
      return [tally, where = std::move(where)](Response&& response) {
        if (response.error && !tally->error) {
          tally->error = response.error;
          tally->why = where + ": " + describe_error(response);
        }
        if (--tally->left == 0) tally->done(tally->error, tally->why);
      };
    };
    auto masters = map_->masters();
    auto uncovered = map_->uncovered();
    tally->left = masters.size() + uncovered.size() + 1;  // + 1: none answers before all are sent
    for (const auto& master : masters) {
      node_at(master)->send(Command{"PING"}, deadline, true, answered(master.to_string()));
    }
    for (const auto& range : uncovered) {
      auto routed = std::make_shared<Routed>(config_.max_redirects);
      prepare(*routed, Command{"PING"}, deadline, true, answered(fmt::format("slot {}", range.first)));
      routed->slot = range.first;
      dispatch(std::move(routed));
    }
    answered({})(Response{});
  });
}

void Cluster::dispatch(std::shared_ptr<Routed> routed) {
  if (closed_) return routed->handler(Response{make_error_code(errc::shut_down), {}});
  if (routed->publish_wait && sharded_) return routed->handler(Response{});
  auto reply_to = [this, routed](NodeAddress from) {
    return [this, routed, from = std::move(from)](Response&& response) { answered(routed, from, std::move(response)); };
  };
  if (routed->ask) {
    NodeAddress to = std::move(*routed->ask);
    routed->ask.reset();
    auto node = node_at(to);
    return node->send_asking(routed->command, routed->deadline, routed->idempotent, reply_to(to), routed->wait);
  }
  const NodeAddress* master = map_ ? map_->master_of(routed->slot) : nullptr;
  if (master == nullptr || routed->publish_wait) {
    // No table yet: read one now. A table without a master for the slot
    // (mid-failover): read again soon, not in a loop.
    bool have_table = map_.has_value();
    park(std::move(routed));
    return refresh_in(have_table ? troubled_refresh : std::chrono::milliseconds{0});
  }
  NodeAddress to = *master;  // the table may change before the answer
  node_at(to)->send(routed->command, routed->deadline, routed->idempotent, reply_to(to), routed->wait);
}

void Cluster::answered(const std::shared_ptr<Routed>& routed, const NodeAddress& from, Response&& response) {
  if (closed_) return routed->handler(std::move(response));
  if (!response.error && map_) {
    for (const auto& action : routed->redirects.on(Redirects::read(response.reply, from))) {
      if (auto* patch = std::get_if<Redirects::patch_table>(&action)) {
        map_->moved(patch->slot, patch->to);
      } else if (std::holds_alternative<Redirects::refresh_table>(action)) {
        refresh_in(std::chrono::milliseconds{0});
      } else if (auto* resend = std::get_if<Redirects::resend>(&action)) {
        if (!resend->asking) learnt_moved(response.reply);
        if (options_.log) {
          options_.log(log_level::debug, fmt::format("warden: {}: {} answered {}; sending it to {}", label_,
                                                     from.to_string(), response.reply.str, resend->to.to_string()));
        }
        if (resend->asking) routed->ask = resend->to;
        return dispatch(routed);
      } else if (std::holds_alternative<Redirects::give_up>(action)) {
        return routed->handler(
            unroutable(make_error_code(errc::routing_failed),
                       fmt::format("slot {}: redirected {} times without reaching the node that serves it (the last "
                                   "answer, from {}: {})",
                                   routed->slot, routed->redirects.taken(), from.to_string(), response.reply.str)));
      }
    }
  }
  // The node did not run it: it left the cluster or lost the slot (retired),
  // or refused it as a replica. Where the slot lives now may take it. (A
  // node that kept refusing it until the deadline, TRYAGAIN while its slot
  // migrates, has answered: its refusal is the answer.)
  bool not_run_here = (response.error == errc::connection_lost && (response.not_run || routed->idempotent)) ||
                      (!response.error && classify(response.reply) == reply_class::readonly);
  if (not_run_here && clock::now() < routed->deadline && routed->reroutes < 2 * config_.max_redirects) {
    ++routed->reroutes;
    refresh_in(std::chrono::milliseconds{0});
    return dispatch(routed);
  }
  routed->handler(std::move(response));
}

void Cluster::park(std::shared_ptr<Routed> routed) {
  // Until a table names a master for its slot (a slot left uncovered by a
  // failing master may be served again within the deadline), or its deadline.
  parked_.park(std::move(routed), [this](const std::shared_ptr<Routed>& expired) {
    std::string why = map_ ? fmt::format("no master serves slot {} (the cluster's uncovered slots: {})", expired->slot,
                                         uncovered_text(*map_))
                           : "no node has given the slot table yet";
    if (!refresh_problem_.empty()) why += " (" + refresh_problem_ + ")";
    expired->handler(unroutable(refresh_error_ ? refresh_error_ : make_error_code(errc::routing_failed), why));
  });
}

bool Cluster::idle() const {
  // A table read in flight is on some master's connection, but its
  // follow-up (PUBSUB SHARDNUMSUB) and a pending retirement are not.
  if (closed_ || refreshing_ || !parked_.empty() || !retiring_.empty()) return false;
  return std::all_of(nodes_.begin(), nodes_.end(), [](const auto& entry) { return entry.second->idle(); });
}

std::shared_ptr<Node> Cluster::node_for(std::string_view key) {
  const NodeAddress* master = map_ ? map_->master_of(keys::slot(key)) : nullptr;
  if (master == nullptr || closed_) return nullptr;
  return node_at(*master);
}

std::string Cluster::describe(std::string_view key) const { return fmt::format("{} slot {}", label_, keys::slot(key)); }

std::string Cluster::server_of(std::string_view key) {
  const NodeAddress* master = map_ ? map_->master_of(keys::slot(key)) : nullptr;
  return master != nullptr ? master->to_string() : describe(key);
}

const char* Cluster::publish_command() const {
  if (!sharded_) return nullptr;
  return *sharded_ ? "spublish" : "publish";
}

std::uint32_t Cluster::group_of(std::string_view key) const { return keys::slot(key); }

// ---- nodes

std::shared_ptr<Node> Cluster::node_at(const NodeAddress& address) {
  auto name = address.to_string();
  auto it = nodes_.find(name);
  if (it != nodes_.end()) return it->second;
  auto node = std::make_shared<Node>(loop_, options_at(options_, address), replicas_);
  node->set_sharded(sharded_.value_or(false));
  node->on_refused([this](const Reply& refusal) {
    if (closed_) return;
    // A shard subscription answered MOVED says where its slot went.
    if (auto redirect = redirect_of(refusal); redirect && classify(refusal) == reply_class::moved && map_) {
      if (!redirect->host.empty()) {
        map_->moved(redirect->slot, NodeAddress{redirect->host, redirect->port});
        learnt_moved(refusal);
      }
    }
    refresh_in(std::chrono::milliseconds{0});
  });
  node->start(false);
  nodes_.emplace(std::move(name), node);
  return node;
}

void Cluster::node_event(const ConnectionEvent& event) {
  if (closed_ || event.role != connection_role::command) return;
  if (event.state == connection_state::up) return;
  // A node that cannot be reached may have failed over: ask the others.
  refresh_in(std::chrono::milliseconds{0});
}

// ---- the slot table

void Cluster::refresh_in(std::chrono::milliseconds after) {
  if (closed_) return;
  auto when = clock::now() + after;
  if (refresh_timer_ != 0 && refresh_at_ <= when) return;
  loop_.cancel(refresh_timer_);
  refresh_at_ = when;
  refresh_timer_ = loop_.at(when, [this] {
    refresh_timer_ = 0;
    refresh();
  });
}

void Cluster::refresh() {
  if (closed_) return;
  if (refreshing_) {
    refresh_again_ = true;
    return;
  }
  refreshing_ = true;
  refresh_again_ = false;
  // Masters that are connected first (they answer at once); the seeds only
  // when there are none (a seed may be a replica, let go once the table is
  // in: asking it every time would connect to it every time); then masters
  // still connecting or away.
  std::vector<NodeAddress> candidates, later;
  auto add = [&candidates, &later](const NodeAddress& address, bool now) {
    auto seen = [&address](const std::vector<NodeAddress>& list) {
      return std::find(list.begin(), list.end(), address) != list.end();
    };
    if (seen(candidates) || seen(later)) return;
    (now ? candidates : later).push_back(address);
  };
  if (map_) {
    for (const auto& master : map_->masters()) {
      auto it = nodes_.find(master.to_string());
      if (it != nodes_.end() && it->second->commands().ready()) add(master, true);
    }
  }
  if (candidates.empty()) {
    for (const auto& seed : seeds_) add(seed, true);
  }
  if (map_) {
    for (const auto& master : map_->masters()) add(master, false);
  }
  candidates.insert(candidates.end(), later.begin(), later.end());
  ask_for_slots(std::move(candidates), 0, {}, true);
}

void Cluster::ask_for_slots(std::vector<NodeAddress> candidates, std::size_t next, std::string problems,
                            bool answered) {
  if (closed_) return;
  if (next == candidates.size()) return refresh_failed(problems, answered);
  NodeAddress address = candidates[next];
  auto node = node_at(address);
  auto wait = node->commands().ready() ? command_timeout_ : std::min(command_timeout_, unconnected_answer);
  node->send({"CLUSTER", "SLOTS"}, clock::now() + wait, true,
             [this, candidates = std::move(candidates), next, problems = std::move(problems), answered,
              address](Response&& response) mutable {
               if (closed_) return;
               auto add_problem = [&problems, &address](const std::string& what) {
                 problems += (problems.empty() ? "" : "; ") + address.to_string() + ": " + what;
               };
               if (response.error) {
                 if (!refresh_error_ || refresh_error_ == errc::routing_failed) refresh_error_ = response.error;
                 add_problem(describe_error(response));
                 return ask_for_slots(std::move(candidates), next + 1, std::move(problems), false);
               }
               std::string problem;
               auto map = SlotMap::from_cluster_slots(response.reply, address, &problem);
               if (!map) {
                 add_problem(problem);
                 return ask_for_slots(std::move(candidates), next + 1, std::move(problems), answered);
               }
               got_slots(std::move(*map), address);
             });
}

void Cluster::got_slots(SlotMap map, const NodeAddress& from) {
  if (sharded_) {
    install(std::move(map));
    return refresh_done();
  }
  // Automatic: shard channels if the cluster knows them (Redis 7).
  auto node = node_at(from);
  node->send({"PUBSUB", "SHARDNUMSUB"}, clock::now() + command_timeout_, true,
             [this, map = std::move(map)](Response&& response) mutable {
               if (closed_) return;
               if (response.error) {
                 // Not an answer either way: ask again with the next table.
                 refresh_failed(fmt::format("PUBSUB SHARDNUMSUB got no answer: {}", describe_error(response)), false);
                 return;
               }
               sharded_ = response.reply.type == Reply::kind::array;
               if (options_.log) {
                 options_.log(
                     log_level::info,
                     fmt::format("warden: {}: waiters use {} pub/sub ({})", label_, *sharded_ ? "sharded" : "classic",
                                 *sharded_ ? "SSUBSCRIBE / SPUBLISH" : "PUBSUB SHARDNUMSUB is unknown here"));
               }
               for (auto& [address, node] : nodes_) node->set_sharded(*sharded_);
               install(std::move(map));
               refresh_done();
             });
}

void Cluster::learnt_moved(const Reply& reply) {
  // The map has the new owner already (Redirects patched it): remember when.
  auto redirect = redirect_of(reply);
  if (!redirect || !map_) return;
  if (const NodeAddress* owner = map_->master_of(redirect->slot)) moved_[redirect->slot] = {*owner, clock::now()};
}

void Cluster::install(SlotMap map) {
  // A table that contradicts a recent MOVED is behind it for that slot: keep
  // what the MOVED said, and read again soon (refresh_done()).
  behind_ = false;
  auto now = clock::now();
  for (auto it = moved_.begin(); it != moved_.end();) {
    const NodeAddress* owner = map.master_of(it->first);
    if (now - it->second.at > moved_trust || (owner != nullptr && *owner == it->second.to)) {
      it = moved_.erase(it);
      continue;
    }
    if (options_.log) {
      options_.log(log_level::debug,
                   fmt::format("warden: {}: a slot table says slot {} is served by {}; a MOVED {} ms ago said {}: "
                               "keeping that",
                               label_, it->first, owner ? owner->to_string() : "nobody",
                               std::chrono::duration_cast<std::chrono::milliseconds>(now - it->second.at).count(),
                               it->second.to.to_string()));
    }
    map.moved(it->first, it->second.to);
    behind_ = true;
    ++it;
  }
  map_ = std::move(map);
  failed_refreshes_ = 0;
  refresh_error_ = {};
  refresh_problem_.clear();
  // Nodes that serve no slot any more (a failed master replaced, a seed that
  // is a replica, a master emptied by resharding) are let go: what waits on
  // them goes where its slot lives now.
  std::set<std::string> masters;
  for (const auto& master : map_->masters()) masters.insert(master.to_string());
  std::vector<std::shared_ptr<Node>> gone;
  for (auto it = nodes_.begin(); it != nodes_.end();) {
    if (masters.count(it->first) != 0) {
      ++it;
      continue;
    }
    gone.push_back(std::move(it->second));
    it = nodes_.erase(it);
  }
  for (auto& node : gone) {
    auto why = fmt::format("{} serves no slot of the {} any more", node->server(), label_);
    if (options_.log && node->commands().ready()) options_.log(log_level::info, "warden: " + why);
    retiring_.retire_next_turn(node, why);
  }
  // Those whose slot is still not served wait on (dispatch parks them again).
  for (auto& routed : parked_.take_all()) dispatch(routed);
}

void Cluster::refresh_failed(const std::string& problems, bool every_node_answered) {
  refreshing_ = false;
  refresh_problem_ = problems;
  if (every_node_answered || !refresh_error_) refresh_error_ = make_error_code(errc::routing_failed);
  ++failed_refreshes_;
  if (options_.log) {
    options_.log(failed_refreshes_ == 1 ? log_level::warning : log_level::debug,
                 fmt::format("warden: {}: could not read the slot table: {}", label_, problems));
  }
  if (every_node_answered && !map_) {
    // Every node answered, and none as a cluster node does (cluster support
    // disabled, or not Redis): waiting will not help the commands.
    auto why = "no node gave the slot table: " + problems;
    for (auto& routed : parked_.take_all()) routed->handler(unroutable(make_error_code(errc::routing_failed), why));
  }
  refresh_in(refresh_backoff_.delay(std::min(failed_refreshes_, 16)));
}

void Cluster::refresh_done() {
  refreshing_ = false;
  if (refresh_again_) {
    refresh_again_ = false;
    return refresh_in(std::chrono::milliseconds{0});
  }
  // Commands waiting for their slot to be served: read again soon.
  bool troubled = behind_ || !parked_.empty();
  for (const auto& [address, node] : nodes_) troubled = troubled || !node->commands().ready();
  refresh_in(troubled ? std::min(troubled_refresh, config_.refresh_interval) : config_.refresh_interval);
}

}  // namespace warden::detail
