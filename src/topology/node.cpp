#include "topology/node.hpp"

#include "topology/eviction_watch.hpp"
#include "topology/synced_writes.hpp"

#include <algorithm>
#include <random>

#include <fmt/format.h>

#include <warden/error.hpp>

namespace warden::detail {
namespace {

ConnectionOptions subscriber_options(const ConnectionOptions& options) {
  ConnectionOptions out = options;
  out.role = connection_role::subscriber;
  return out;
}

}  // namespace

// The command connection's options: with Config::eviction_guard on, its
// set-up reads the server's memory settings (EvictionWatch), so they are
// known before any lock command is written on it.
ConnectionOptions Node::command_options(const ConnectionOptions& options) {
  ConnectionOptions out = options;
  if (options.eviction_guard != eviction_guard_mode::off) {
    out.setup_reads = [this](const Response* answer) {
      return eviction_ ? eviction_->setup_read(answer) : std::vector<std::string>{};
    };
  }
  return out;
}

ConnectionOptions options_at(ConnectionOptions base, const NodeAddress& address) {
  base.host = address.host;
  base.port = address.port;
  if (base.tls && base.tls_server_name.empty()) base.tls_server_name = address.host;
  return base;
}

void RetiringNodes::retire_next_turn(std::shared_ptr<Node> node, std::string why) {
  nodes_.push_back(node);
  loop_.after(std::chrono::milliseconds{0}, [this, node, why = std::move(why)] {
    auto it = std::find(nodes_.begin(), nodes_.end(), node);
    if (it == nodes_.end()) return;  // closed meanwhile
    nodes_.erase(it);
    node->retire(why);
  });
}

void RetiringNodes::close_all() {
  auto nodes = std::move(nodes_);
  nodes_.clear();
  for (auto& node : nodes) node->close();
}

// One command until it runs or its deadline passes.
struct Node::Attempt {
  Command command;
  clock::time_point deadline;
  bool idempotent = false;
  bool asking = false;  // ASKING goes just before it, each time it is sent
  replica_wait wait = replica_wait::none;
  int refusals = 0;
  Connection::Handler handler;
};

Node::Node(EventLoop& loop, const ConnectionOptions& options, ReplicaPolicy replicas)
    : loop_(loop),
      options_(options),
      log_(options.log),
      refused_backoff_(std::chrono::milliseconds{5}, std::chrono::milliseconds{500}, std::random_device{}()),
      commands_(loop, command_options(options)) {
  if (replicas.on()) synced_ = std::make_unique<SyncedWrites>(loop, options, replicas, commands_);
  if (options.eviction_guard != eviction_guard_mode::off) {
    eviction_ = std::make_unique<EvictionWatch>(loop, options, commands_.server());
    eviction_->watch(commands_);
  }
}

Node::~Node() = default;

bool Node::idle() const {
  return (!synced_ || synced_->idle()) && backing_off_.empty() && commands_.idle() && (!pubsub_ || pubsub_->idle());
}

PubSub& Node::pubsub() {
  if (!pubsub_) {
    pubsub_ = std::make_unique<PubSub>(loop_, subscriber_options(options_), sharded_);
    pubsub_->on_redirect([this](const Reply& refusal) {
      if (on_refused_) on_refused_(refusal);
    });
    // A node already closed keeps a closed subscriber: joins then see a link
    // that never comes up, as on a closed node's connections.
    if (closed_) {
      pubsub_->close();
    } else if (started_) {
      pubsub_->start();
    }
  }
  return *pubsub_;
}

void Node::start(bool with_subscriber) {
  started_ = true;
  commands_.start();
  if (synced_) synced_->start();
  if (with_subscriber) pubsub().start();
}

void Node::close() {
  if (closed_) return;
  closed_ = true;
  if (pubsub_) pubsub_->close();
  if (synced_) synced_->close();
  if (eviction_) eviction_->close();
  commands_.close();
  fail_backing_off(Response{make_error_code(errc::shut_down), {}});
}

void Node::retire(const std::string& why) {
  if (closed_) return;
  closed_ = true;
  retired_ = true;
  if (pubsub_) pubsub_->retire();
  if (synced_) synced_->retire(why);
  if (eviction_) eviction_->close();
  commands_.retire(why);
  Response not_run{make_error_code(errc::connection_lost), {}};
  not_run.not_run = true;
  not_run.detail = why;
  fail_backing_off(not_run);
}

void Node::fail_backing_off(const Response& response) {
  auto waiting = std::move(backing_off_);
  backing_off_.clear();
  for (auto& entry : waiting) {
    loop_.cancel(entry.first);
    Response copy = response;
    entry.second->handler(std::move(copy));
  }
}

void Node::send_asking(Command command, clock::time_point deadline, bool idempotent, Connection::Handler handler,
                       replica_wait wait) {
  auto attempt = std::make_shared<Attempt>();
  attempt->command = std::move(command);
  attempt->command.use_body();
  attempt->asking = true;
  attempt->wait = wait;
  attempt->deadline = deadline;
  attempt->idempotent = idempotent;
  attempt->handler = std::move(handler);
  send_attempt(std::move(attempt));
}

void Node::send(Command command, clock::time_point deadline, bool idempotent, Connection::Handler handler,
                replica_wait wait) {
  auto attempt = std::make_shared<Attempt>();
  attempt->command = std::move(command);
  attempt->wait = wait;
  attempt->deadline = deadline;
  attempt->idempotent = idempotent;
  attempt->handler = std::move(handler);
  send_attempt(std::move(attempt));
}

void Node::send_attempt(std::shared_ptr<Attempt> attempt) {
  if (attempt->wait == replica_wait::hold && eviction_ && eviction_->refusing()) {
    // Config::eviction_guard refuse: an acquire is not sent to a server that
    // may evict the hold it would take. Not "did not run" (nothing is
    // retried): the acquire fails with the cause.
    Response refused{make_error_code(errc::eviction_possible), {}};
    refused.detail = eviction_->refusal();
    return attempt->handler(std::move(refused));
  }
  // The connection gets a copy of the bytes; ours stay for a resend.
  auto answered = [this, attempt](Response&& response) {
    auto kind = classify(response.reply);
    if (response.error || !did_not_run(kind)) return attempt->handler(std::move(response));
    if (kind == reply_class::did_not_run_noscript && attempt->command.is_evalsha()) {
      // Sent again at once with the body. Each retry goes to the back of the
      // connection's queue: callers that need their commands to run in order
      // do not send the next one before this one's handler ran.
      attempt->command.use_body();
      return send_attempt(attempt);
    }
    if (on_refused_) on_refused_(response.reply);
    auto delay = refused_backoff_.delay(std::min(attempt->refusals++, 16));
    if (clock::now() + delay >= attempt->deadline) {
      // The caller's answer: no "sending it again" for a call that is over.
      Response refused{make_error_code(errc::timed_out), std::move(response.reply)};
      refused.not_run = true;
      return attempt->handler(std::move(refused));
    }
    if (log_) {
      log_(log_level::debug,
           fmt::format("warden: {}: the server did not run {}: {}; sending it again in {} ms", commands_.describe(),
                       attempt->command.name(), response.reply.str, delay.count()));
    }
    auto timer = std::make_shared<TimerQueue::id>(0);
    *timer = loop_.after(delay, [this, attempt, timer] {
      backing_off_.erase(*timer);
      send_attempt(attempt);
    });
    backing_off_.emplace(*timer, attempt);
  };
  if (synced_ && attempt->wait != replica_wait::none) {
    return synced_->send(attempt->command, attempt->asking, attempt->deadline, attempt->idempotent, attempt->wait,
                         std::move(answered));
  }
  // ASKING's own answer (+OK) is of no interest; the two go out together, in
  // order, so the command is the one it applies to.
  if (attempt->asking) commands_.send({"ASKING"}, attempt->deadline, true, [](Response&&) {});
  commands_.send_encoded(attempt->command.bytes(), attempt->deadline, attempt->idempotent, std::move(answered));
}

}  // namespace warden::detail
