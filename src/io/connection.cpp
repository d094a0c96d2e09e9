// Connection: its life (start, ready, health checks, drops and reconnects,
// close). The socket and its bytes are in connection_transport.cpp; commands,
// replies and deadlines in connection_requests.cpp.
#include "io/connection.hpp"

#include <fmt/format.h>

#include <deque>
#include <random>
#include <variant>
#include <vector>

#include <warden/error.hpp>

#include "io/connection_socket.hpp"
#include "io/tls_session.hpp"

namespace warden::detail {
namespace {

std::uint64_t random_seed() {
  std::random_device device;
  return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

// "host:port", or "[v6]:port" for an IPv6 address (as a URL writes it, so
// that the port cannot be read as a part of the address).
std::string host_and_port(const std::string& host, std::uint16_t port) {
  if (host.find(':') != std::string::npos) return fmt::format("[{}]:{}", host, port);
  return fmt::format("{}:{}", host, port);
}

}  // namespace

Connection::Connection(EventLoop& loop, ConnectionOptions options)
    : loop_(loop),
      options_(std::move(options)),
      server_(options_.unix_socket.empty() ? host_and_port(options_.host, options_.port) : options_.unix_socket),
      link_(Backoff(options_.backoff_min, options_.backoff_max, random_seed())),
      window_(options_.max_in_flight) {}

Connection::~Connection() { close(); }

void Connection::log(log_level level, const std::string& message) const {
  if (options_.log) options_.log(level, message);
}

std::string Connection::describe() const {
  return fmt::format("{} connection to {}", to_string(options_.role), server_);
}

void Connection::report(connection_state state, bool reconnect, std::error_code why, const std::string& detail,
                        std::chrono::milliseconds retry_in) const {
  if (!options_.on_event) return;
  ConnectionEvent event;
  event.node = server_;
  event.role = options_.role;
  event.state = state;
  event.reconnect = reconnect;
  event.error = why;
  event.detail = detail;
  event.retry_in = retry_in;
  options_.on_event(event);
}

bool Connection::idle() const {
  return link_.current() != LinkState::state::connecting && requests_.empty() && protocol_.in_flight() == 0 &&
         !write_in_progress_ && plain_out_.empty() && wire_out_.empty();
}

void Connection::start() {
  if (link_.current() == LinkState::state::idle) connect();
}

void Connection::become_ready() {
  loop_.cancel(connect_timer_);
  connect_timer_ = 0;
  bool reconnect = link_.ever_connected();
  link_.on(LinkState::set_up{});
  last_failure_.clear();
  logged_failure_.clear();
  log(log_level::info, fmt::format("warden: {} {}{}", describe(), reconnect ? "re-established" : "established",
                                   failed_attempts_ > 0 ? fmt::format(" after {} failed attempt{}", failed_attempts_,
                                                                      failed_attempts_ == 1 ? "" : "s")
                                                        : std::string()));
  failed_attempts_ = 0;
  report(connection_state::up, reconnect, {}, {}, std::chrono::milliseconds{0});
  last_reply_ = clock::now();
  probe_outstanding_ = false;
  health_timer_ = loop_.after(options_.health_check_interval, [this] { health_tick(); });
  write_queued();
  if (on_ready_) on_ready_();
}

Response Connection::failure(std::error_code why) const {
  Response response{why, {}};
  if (why == link_.last_error() || why == errc::connection_lost) response.detail = last_failure_;
  return response;
}

std::error_code Connection::pending_error() const {
  // A command that never got onto a connection reports why there was none.
  if (link_.last_error()) return link_.last_error();
  return make_error_code(errc::timed_out);
}

void Connection::health_tick() {
  health_timer_ = 0;
  if (!link_.ready()) return;
  auto now = clock::now();
  if (probe_outstanding_) {
    if (now - probe_sent_ >= options_.health_check_interval) {
      // libuv runs timers before it reads sockets: after the loop stalled
      // (a slow callback), the answer may be waiting unread. Decide after
      // the next read phase (a due-now timer would run before it).
      health_timer_ = loop_.after(std::chrono::milliseconds{1}, [this] {
        health_timer_ = 0;
        if (probe_outstanding_) {
          drop(make_error_code(errc::timed_out), "health check got no reply");
        } else {
          health_timer_ = loop_.after(options_.health_check_interval, [this] { health_tick(); });
        }
      });
      return;
    }
  } else if (now - last_reply_ >= options_.health_check_interval) {
    // PING is answered in order on a subscribed link too (["pong", ""]).
    probe_outstanding_ = true;
    probe_sent_ = now;
    send({"PING"}, now + options_.health_check_interval, true, [](Response&&) {});
  }
  health_timer_ = loop_.after(options_.health_check_interval, [this] { health_tick(); });
}

void Connection::drop(std::error_code why, std::string detail, bool closed_unanswered) {
  bool was_ready = link_.ready();
  release_socket();
  loop_.cancel(connect_timer_);
  loop_.cancel(health_timer_);
  connect_timer_ = health_timer_ = 0;
  setup_pending_ = 0;
  if (link_.closed()) return;
  // What was in flight: idempotent commands go out again first, in their
  // order; for the others the outcome is unknown.
  std::deque<std::uint64_t> resend;
  std::vector<std::uint64_t> lost;
  for (auto id : protocol_.reset()) {
    auto it = requests_.find(id);
    if (it == requests_.end()) continue;
    Request& request = it->second;
    request.in_flight = false;
    if (request.idempotent && request.resends < options_.retry_attempts) {
      ++request.resends;
      resend.push_back(id);
    } else {
      lost.push_back(id);
    }
  }
  queue_.insert(queue_.begin(), resend.begin(), resend.end());
  window_.on(SendWindow::link_reset{});
  std::chrono::milliseconds delay{0};
  bool fail_queued = false;
  for (const auto& action : link_.on(LinkState::link_failed{why, closed_unanswered})) {
    if (auto* retry = std::get_if<LinkState::retry_after>(&action)) {
      delay = retry->delay;
    } else if (std::holds_alternative<LinkState::fail_queued>(action)) {
      fail_queued = true;
    }
  }
  last_failure_ = detail;
  if (!was_ready) ++failed_attempts_;
  // The first failure of a streak, and any that says something new, at info;
  // the same failure again (a server that stays away) at debug.
  bool repeat = !was_ready && detail == logged_failure_;
  if (!repeat) logged_failure_ = detail;
  log(was_ready ? log_level::warning
      : repeat  ? log_level::debug
                : log_level::info,
      fmt::format("warden: {} {}: {}; retrying in {} ms{}", describe(), was_ready ? "lost" : "failed", detail,
                  delay.count(), repeat || was_ready ? "" : " (repeats of this failure are logged at debug level)"));
  report(was_ready ? connection_state::down : connection_state::connect_failed, false, why, detail, delay);
  reconnect_timer_ = loop_.after(delay, [this] { connect(); });
  // Handlers run last: what they send now is queued for the next connection.
  for (auto id : lost) complete(id, failure(make_error_code(errc::connection_lost)));
  if (fail_queued) {
    // Waiting will not fix credentials, trust or a port that speaks TLS.
    auto queued = std::move(queue_);
    queue_.clear();
    for (auto id : queued) complete(id, failure(why));
  }
  if (was_ready && on_down_ && !link_.closed()) on_down_();
}

void Connection::close() { shut(nullptr); }

void Connection::retire(const std::string& why) { shut(&why); }

void Connection::shut(const std::string* retired) {
  if (link_.closed()) return;
  link_.on(LinkState::close_requested{});
  release_socket();
  loop_.cancel(connect_timer_);
  loop_.cancel(reconnect_timer_);
  loop_.cancel(health_timer_);
  loop_.cancel(deadline_timer_);
  connect_timer_ = reconnect_timer_ = health_timer_ = deadline_timer_ = 0;
  std::vector<deadline_entry>().swap(deadlines_);
  protocol_.reset();
  std::vector<std::uint64_t> pending;
  for (auto& entry : requests_) pending.push_back(entry.first);
  for (auto id : pending) {
    if (retired == nullptr) {
      complete(id, Response{make_error_code(errc::shut_down), {}});
      continue;
    }
    // Retired: what never reached the server certainly did not run there.
    auto it = requests_.find(id);
    if (it == requests_.end()) continue;
    Response response{make_error_code(errc::connection_lost), {}};
    response.not_run = !it->second.in_flight;
    response.detail = *retired;
    complete(id, std::move(response));
  }
  queue_.clear();
}

}  // namespace warden::detail
