#include "topology/sentinel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <random>
#include <sstream>

#include <warden/error.hpp>

namespace warden::detail {
namespace {

// How long a sentinel (or a candidate master) that is not connected gets to
// answer before the next one is asked.
constexpr std::chrono::milliseconds unconnected_answer{1'000};

std::optional<std::uint16_t> port_of(std::string_view text) {
  unsigned value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || value == 0 || value > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(value);
}

}  // namespace

Sentinel::Sentinel(EventLoop& loop, ConnectionOptions master, ConnectionOptions sentinel, ReplicaPolicy replicas,
                   const SentinelConfig& config, std::chrono::milliseconds command_timeout)
    : loop_(loop),
      master_options_(std::move(master)),
      replicas_(replicas),
      sentinel_options_(std::move(sentinel)),
      config_(config),
      command_timeout_(command_timeout),
      resolver_([&config] {
        std::vector<NodeAddress> sentinels;
        for (const auto& node : config.sentinels) sentinels.push_back(NodeAddress{node.host, node.port});
        return sentinels;
      }()),
      parked_(loop),
      retiring_(loop),
      retry_backoff_(std::chrono::milliseconds{50}, std::chrono::milliseconds{1'000}, std::random_device{}()) {
  label_ = fmt::format("master '{}' of sentinels ", config_.master_name);
  for (std::size_t i = 0; i < resolver_.sentinels().size(); ++i) {
    label_ += (i == 0 ? "" : ",") + resolver_.sentinels()[i].to_string();
  }
  // The master's connection failing may mean a failover: ask the sentinels
  // at once (the user's hook still hears every event).
  master_options_.on_event = [user = std::move(master_options_.on_event), this](const ConnectionEvent& event) {
    if (user) user(event);
    if (!closed_ && event.role == connection_role::command && event.state != connection_state::up) {
      perform(resolver_.on(SentinelResolver::resolve_wanted{}));
    }
  };
}

Sentinel::~Sentinel() { close(); }

void Sentinel::start() {
  perform(resolver_.on(SentinelResolver::resolve_wanted{}));
  poll_timer_ = loop_.after(config_.poll_interval, [this] { poll(); });
}

void Sentinel::poll() {
  // The backstop for a switch message that never came (the watched
  // sentinel down, a reconnect): ask again every poll_interval.
  poll_timer_ = 0;
  if (closed_) return;
  perform(resolver_.on(SentinelResolver::resolve_wanted{}));
  poll_timer_ = loop_.after(config_.poll_interval, [this] { poll(); });
}

void Sentinel::close() {
  if (closed_) return;
  closed_ = true;
  loop_.cancel(poll_timer_);
  poll_timer_ = 0;
  loop_.cancel(retry_timer_);
  retry_timer_ = 0;
  for (auto& routed : parked_.take_all()) routed->handler(Response{make_error_code(errc::shut_down), {}});
  if (master_) master_->close();
  if (candidate_) candidate_->close();
  retiring_.close_all();
  for (auto& [address, link] : sentinels_) link->close();
  if (switches_) switches_->close();
}

bool Sentinel::idle() const {
  // No master yet, a round asking the sentinels or a candidate its ROLE, a
  // switch being followed: not idle. The +switch-master subscription, once
  // confirmed, is not in flight: its messages wake the parked loop thread
  // themselves (watch_switches).
  if (closed_ || !master_ || resolver_.resolving() || !parked_.empty() || !retiring_.empty()) return false;
  if (!master_->idle() || (candidate_ && !candidate_->idle()) || (switches_ && !switches_->idle())) return false;
  return std::all_of(sentinels_.begin(), sentinels_.end(), [](const auto& entry) { return entry.second->idle(); });
}

std::string Sentinel::server_of(std::string_view) { return master_ ? master_->server() : label_; }

// ---- routing

void Sentinel::send(Command command, std::string_view, clock::time_point deadline, bool idempotent,
                    Connection::Handler handler) {
  auto routed = std::make_shared<RoutedCommand>();
  prepare(*routed, std::move(command), deadline, idempotent, std::move(handler));
  dispatch(std::move(routed));
}

void Sentinel::run_script(Command command, std::string_view, clock::time_point deadline, bool idempotent,
                          Connection::Handler handler, replica_wait wait) {
  auto routed = std::make_shared<RoutedCommand>();
  prepare(*routed, std::move(command), deadline, idempotent, std::move(handler), wait);
  dispatch(std::move(routed));
}

void Sentinel::dispatch(std::shared_ptr<RoutedCommand> routed) {
  if (closed_) return routed->handler(Response{make_error_code(errc::shut_down), {}});
  if (!master_) {
    // Until a master is confirmed, or its deadline.
    parked_.park(std::move(routed), [this](const std::shared_ptr<RoutedCommand>& expired) {
      std::string why = fmt::format("no master confirmed for '{}' yet", config_.master_name);
      std::error_code error = resolve_error_;
      std::string problem = resolve_problem_;
      if (!error) {
        // The sentinels' queries may fail with this command's deadline (a
        // query's deadline is the same command_timeout, begun a moment
        // earlier or later): a sentinel that cannot be reached says why now.
        for (const auto& [address, link] : sentinels_) {
          auto cause = link->pending_error();
          if (link->ready() || cause == errc::timed_out) continue;
          error = cause;
          if (problem.empty()) problem = fmt::format("{}: {}", address, cause.message());
          break;
        }
      }
      if (!problem.empty()) why += " (" + problem + ")";
      expired->handler(unroutable(error ? error : make_error_code(errc::routing_failed), why));
    });
    return perform(resolver_.on(SentinelResolver::resolve_wanted{}));
  }
  auto node = master_;
  node->send(
      routed->command, routed->deadline, routed->idempotent,
      [this, routed, node](Response&& response) { answered(routed, node, std::move(response)); }, routed->wait);
}

void Sentinel::answered(const std::shared_ptr<RoutedCommand>& routed, const std::shared_ptr<Node>& node,
                        Response&& response) {
  if (closed_) return routed->handler(std::move(response));
  bool readonly = !response.error && classify(response.reply) == reply_class::readonly;
  if (readonly && node == master_) {
    // A demoted master: it must not get another write. Ask the sentinels.
    drop_master(fmt::format("{} answered READONLY: it is no master any more", node->server()));
  }
  // Not run there (a demoted or dropped master): the master the sentinels
  // name next may take it.
  bool not_run_here = readonly || (response.error == errc::connection_lost && (response.not_run || routed->idempotent));
  if (not_run_here && clock::now() < routed->deadline && routed->reroutes < 10) {
    ++routed->reroutes;
    return dispatch(routed);
  }
  routed->handler(std::move(response));
}

// ---- following the sentinels

void Sentinel::perform(const SentinelResolver::actions& actions) {
  for (const auto& action : actions) {
    if (closed_) return;
    if (auto* ask = std::get_if<SentinelResolver::ask_sentinel>(&action)) {
      ask_sentinel(*ask);
    } else if (auto* confirm = std::get_if<SentinelResolver::confirm_role>(&action)) {
      confirm_role(*confirm);
    } else if (auto* use = std::get_if<SentinelResolver::use_master>(&action)) {
      use_master(use->to);
    } else if (auto* retry = std::get_if<SentinelResolver::retry_later>(&action)) {
      retry_later(retry->problem);
    }
  }
}

Connection& Sentinel::sentinel_link(const NodeAddress& address) {
  auto name = address.to_string();
  auto it = sentinels_.find(name);
  if (it != sentinels_.end()) return *it->second;
  auto link = std::make_unique<Connection>(loop_, options_at(sentinel_options_, address));
  link->start();
  return *sentinels_.emplace(std::move(name), std::move(link)).first->second;
}

void Sentinel::ask_sentinel(const SentinelResolver::ask_sentinel& step) {
  auto& link = sentinel_link(step.to);
  auto wait = link.ready() ? command_timeout_ : std::min(command_timeout_, unconnected_answer);
  link.send({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", config_.master_name}, clock::now() + wait, true,
            [this, round = step.round](Response&& response) {
              if (closed_) return;
              if (response.error) {
                resolve_error_ = response.error;
                return perform(resolver_.on(
                    SentinelResolver::sentinel_answered{round, std::nullopt, false, describe_error(response)}));
              }
              const Reply& reply = response.reply;
              if (reply.is_error()) {
                return perform(resolver_.on(
                    SentinelResolver::sentinel_answered{round, std::nullopt, true, "refused: " + reply.str}));
              }
              if (reply.is_nil()) {
                return perform(resolver_.on(SentinelResolver::sentinel_answered{
                    round, std::nullopt, true, fmt::format("knows no master named '{}'", config_.master_name)}));
              }
              std::optional<std::uint16_t> port;
              if (reply.type == Reply::kind::array && reply.elements.size() == 2) port = port_of(reply.elements[1].str);
              if (!port || reply.elements[0].str.empty()) {
                return perform(resolver_.on(SentinelResolver::sentinel_answered{
                    round, std::nullopt, true, "answered something other than [host, port]"}));
              }
              perform(resolver_.on(
                  SentinelResolver::sentinel_answered{round, NodeAddress{reply.elements[0].str, *port}, true, {}}));
            });
}

void Sentinel::confirm_role(const SentinelResolver::confirm_role& step) {
  std::shared_ptr<Node> node;
  if (master_ && master_->server() == step.to.to_string()) {
    node = master_;
  } else {
    if (!candidate_ || candidate_->server() != step.to.to_string()) {
      if (candidate_) candidate_->close();
      candidate_ = std::make_shared<Node>(loop_, options_at(master_options_, step.to), replicas_);
      candidate_->start(false);
    }
    node = candidate_;
  }
  auto wait = node->commands().ready() ? command_timeout_ : std::min(command_timeout_, unconnected_answer);
  node->send({"ROLE"}, clock::now() + wait, true, [this, round = step.round](Response&& response) {
    if (closed_) return;
    if (response.error) {
      return perform(resolver_.on(
          SentinelResolver::role_answered{round, false, "ROLE got no answer: " + describe_error(response)}));
    }
    const Reply& reply = response.reply;
    if (reply.type == Reply::kind::array && !reply.elements.empty() && reply.elements[0].str == "master") {
      return perform(resolver_.on(SentinelResolver::role_answered{round, true, {}}));
    }
    std::string role = reply.type == Reply::kind::array && !reply.elements.empty() ? reply.elements[0].str : reply.str;
    perform(resolver_.on(SentinelResolver::role_answered{round, false, "ROLE says " + role}));
  });
}

void Sentinel::use_master(const NodeAddress& address) {
  failed_rounds_ = 0;
  resolve_error_ = {};
  resolve_problem_.clear();
  auto name = address.to_string();
  const bool changed = !master_ || master_->server() != name;
  if (changed) {
    auto old = std::move(master_);
    if (candidate_ && candidate_->server() == name) {
      master_ = std::move(candidate_);
    } else {
      master_ = std::make_shared<Node>(loop_, options_at(master_options_, address), replicas_);
      master_->start(false);
    }
    master_->pubsub();  // waiters find the subscriber connecting already
    if (old) {
      auto why = fmt::format("the sentinels switched '{}' from {} to {}", config_.master_name, old->server(), name);
      retire(std::move(old), why);
    } else if (master_options_.log) {
      master_options_.log(log_level::info,
                          fmt::format("warden: the sentinels name {} as master '{}'", name, config_.master_name));
    }
  }
  if (candidate_) {
    candidate_->close();
    candidate_.reset();
  }
  const NodeAddress& sentinel = resolver_.sentinel();
  if (!switches_ || !switches_->ready()) watch_switches(sentinel);
  // The sentinels of a master are asked for once it is (newly) confirmed, not
  // at every poll: a poll then costs two round trips, not three.
  if (changed) learn_sentinels(sentinel);
  for (auto& routed : parked_.take_all()) dispatch(routed);
}

void Sentinel::retry_later(const std::string& problem) {
  ++failed_rounds_;
  resolve_problem_ = problem;
  if (resolver_.every_sentinel_answered()) resolve_error_ = make_error_code(errc::routing_failed);
  if (master_options_.log) {
    master_options_.log(failed_rounds_ == 1 ? log_level::warning : log_level::debug,
                        fmt::format("warden: {}: no master confirmed: {}", label_, problem));
  }
  if (!master_ && resolver_.every_sentinel_answered()) {
    // Every sentinel answered and none names a master by that name:
    // waiting will not help the commands.
    auto why = fmt::format("no sentinel names a master '{}': {}", config_.master_name, problem);
    for (auto& routed : parked_.take_all()) routed->handler(unroutable(make_error_code(errc::routing_failed), why));
  }
  loop_.cancel(retry_timer_);
  auto delay = std::min(retry_backoff_.delay(std::min(failed_rounds_, 16)), config_.poll_interval);
  retry_timer_ = loop_.after(delay, [this] {
    retry_timer_ = 0;
    perform(resolver_.on(SentinelResolver::resolve_wanted{}));
  });
}

void Sentinel::drop_master(const std::string& why) {
  if (!master_) return;
  retire(std::move(master_), why);
  master_.reset();
  perform(resolver_.on(SentinelResolver::resolve_wanted{}));
}

void Sentinel::retire(std::shared_ptr<Node> old, const std::string& why) {
  if (master_options_.log) master_options_.log(log_level::warning, "warden: " + why);
  retiring_.retire_next_turn(std::move(old), why);
}

void Sentinel::watch_switches(const NodeAddress& sentinel) {
  if (switches_) switches_->close();
  ConnectionOptions options = options_at(sentinel_options_, sentinel);
  options.role = connection_role::subscriber;
  // A switch is announced unasked: it must wake a parked loop thread.
  options.input_wakes_parked = true;
  switches_ = std::make_unique<Connection>(loop_, options);
  switches_->on_ready([this] { switches_->send_subscription({"SUBSCRIBE", "+switch-master"}); });
  switches_->on_push([this](const Push& push) {
    if (closed_ || push.kind != push_kind::message || push.channel != "+switch-master") return;
    // "<name> <old ip> <old port> <new ip> <new port>"
    std::istringstream fields(push.payload);
    std::string name, old_ip, old_port, new_ip, new_port;
    fields >> name >> old_ip >> old_port >> new_ip >> new_port;
    auto port = port_of(new_port);
    if (name != config_.master_name || new_ip.empty() || !port) return;
    perform(resolver_.on(SentinelResolver::switch_announced{NodeAddress{new_ip, *port}}));
  });
  switches_->start();
}

void Sentinel::learn_sentinels(const NodeAddress& sentinel) {
  sentinel_link(sentinel).send({"SENTINEL", "SENTINELS", config_.master_name}, clock::now() + command_timeout_, true,
                               [this](Response&& response) {
                                 if (closed_ || !response.ok() || response.reply.type != Reply::kind::array) return;
                                 std::vector<NodeAddress> learnt;
                                 for (const auto& entry : response.reply.elements) {
                                   // Each a flat list of field, value: ..., "ip", "10.0.0.7", "port", "26379", ...
                                   std::string ip;
                                   std::optional<std::uint16_t> port;
                                   for (std::size_t i = 0; i + 1 < entry.elements.size(); i += 2) {
                                     if (entry.elements[i].str == "ip") ip = entry.elements[i + 1].str;
                                     if (entry.elements[i].str == "port") port = port_of(entry.elements[i + 1].str);
                                   }
                                   if (!ip.empty() && port) learnt.push_back(NodeAddress{ip, *port});
                                 }
                                 resolver_.on(SentinelResolver::sentinels_learnt{std::move(learnt)});
                               });
}

}  // namespace warden::detail
