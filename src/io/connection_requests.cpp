// Connection's requests: commands queued, written and answered in order,
// the set-up commands of each connection, and the deadline of every command.
#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include <warden/error.hpp>

#include "io/connection.hpp"
#include "io/connection_socket.hpp"
#include "io/spare_buckets.hpp"
#include "io/tls_session.hpp"

namespace warden::detail {

using connection_detail::tls_hint;

namespace {

// Events of a read are kept between reads, but not a burst's worth.
constexpr std::size_t kept_events = 64;

}  // namespace

void Connection::on_bytes(const char* data, std::size_t size) {
  std::vector<LinkProtocol::Event> events;
  events.swap(events_);
  events.clear();
  bool first_bytes = !answered_;
  answered_ = true;
  if (!protocol_.feed(data, size, events)) {
    if (first_bytes && !tls_ && LinkProtocol::starts_tls_record(data, size)) {
      drop(make_error_code(errc::protocol_error),
           fmt::format("the server answered with a TLS record, not a Redis reply; {}", tls_hint));
      return;
    }
    drop(make_error_code(errc::protocol_error), protocol_.error_text());
    return;
  }
  // The answer before this read's: the server could begin on a command
  // only once it was written and the one before it was answered.
  auto previous_answer = last_reply_;
  last_reply_ = clock::now();
  probe_outstanding_ = false;  // any answer shows the server is there
  Socket* socket = socket_;
  for (auto& event : events) {
    if (event.what == LinkProtocol::Event::type::reply) {
      // A reply to a command that timed out meanwhile finds no request.
      auto it = requests_.find(event.id);
      if (it != requests_.end() && it->second.in_flight) {
        window_.on(SendWindow::answered{last_reply_, std::max(it->second.written, previous_answer), it->second.ahead});
      }
      previous_answer = last_reply_;
      complete(event.id, Response{{}, std::move(event.reply)});
    } else if (on_push_) {
      on_push_(event.push);
    }
    // A handler closed or dropped this connection: the rest is moot.
    if (socket_ != socket) return;
  }
  events.clear();
  if (events.capacity() > kept_events) std::vector<LinkProtocol::Event>().swap(events);
  events_.swap(events);
  // The answers made room in the window: what waits goes out, in one write,
  // now (a read may run outside the loop's turn, whose flush would come only
  // with the next wake-up).
  if (!queue_.empty()) {
    write_queued();
    if (socket_ == socket && !plain_out_.empty()) {
      loop_.cancel_flush(this);
      flush_output();
      // A window's worth rarely fits the socket at once: the rest goes by
      // libuv, whose write interest reaches epoll only inside a loop turn.
      // A due-now timer makes sure one comes rather than the next wake-up.
      if (write_in_progress_) loop_.after(std::chrono::milliseconds{0}, [] {});
    }
  }
}

void Connection::setup() {
  // AUTH and SELECT go out ahead of everything queued, then CLIENT SETNAME;
  // the queue is released only when all were answered. A link is ready only
  // once the server has answered on it (with nothing else to send, a PING),
  // so a server refusing our TLS client certificate after the handshake
  // (TLS 1.3), or a listener that accepts and dies, fails the connection
  // attempt rather than a user's command.
  enum class step { auth, select, name, ping };
  std::vector<std::pair<step, std::vector<std::string>>> commands;
  if (!options_.password.empty()) {
    if (options_.username.empty()) {
      commands.push_back({step::auth, {"AUTH", options_.password}});
    } else {
      commands.push_back({step::auth, {"AUTH", options_.username, options_.password}});
    }
  }
  if (options_.database != 0) commands.push_back({step::select, {"SELECT", std::to_string(options_.database)}});
  if (!options_.client_name.empty()) {
    commands.push_back({step::name, {"CLIENT", "SETNAME", options_.client_name}});
  } else if (commands.empty()) {
    commands.push_back({step::ping, {"PING"}});
  }
  setup_pending_ = static_cast<int>(commands.size());
  Socket* socket = socket_;
  for (auto& [what, argv] : commands) {
    std::uint64_t id = next_id_++;
    Request& request = requests_[id];
    LinkProtocol::encode_command(argv, request.command);
    request.deadline = clock::now() + options_.connect_timeout;
    request.handler = [this, socket, what = what, command = argv.front()](Response&& response) {
      if (socket_ != socket) return;  // that connection is gone already
      if (response.error) return;     // a transport failure: the drop is handled already
      // Any answer to the PING or the CLIENT SETNAME shows a Redis server
      // there, one that is loading or running a long script included (the
      // commands queued then meet that refusal and are retried as having not
      // run); only a demand for credentials is a refusal. A server that will
      // not take the name (an ACL without +client|setname, a proxy without
      // CLIENT) still serves locks: the connection stays unnamed.
      bool answer_is_enough = what == step::ping || what == step::name;
      bool refused = response.reply.is_error();
      if (refused && answer_is_enough && classify(response.reply) != reply_class::auth_required) {
        if (what == step::name && !setname_refusal_logged_) {
          setname_refusal_logged_ = true;
          log(log_level::info, fmt::format("warden: {}: the server refused CLIENT SETNAME ({}); the connection "
                                           "stays unnamed in CLIENT LIST",
                                           describe(), response.reply.str));
        }
        refused = false;
      }
      if (refused) {
        // Only a refusal of the credentials or the database is permanent; any
        // other error (e.g. too many clients) is retried like a failed connect.
        auto refusal = describe_auth_refusal(command, response.reply, !options_.username.empty());
        drop(refusal.error, refusal.message);
        return;
      }
      if (--setup_pending_ == 0) setup_read(nullptr);
    };
    write_request(id, request);
  }
}

void Connection::setup_read(const Response* answer) {
  std::vector<std::string> argv;
  if (options_.setup_reads) argv = options_.setup_reads(answer);
  if (argv.empty()) return become_ready();
  std::uint64_t id = next_id_++;
  Request& request = requests_[id];
  LinkProtocol::encode_command(argv, request.command);
  request.deadline = clock::now() + options_.connect_timeout;
  Socket* socket = socket_;
  request.handler = [this, socket](Response&& response) {
    if (socket_ != socket) return;  // that connection is gone already
    if (response.error) return;     // a transport failure: the drop is handled already
    setup_read(&response);
  };
  write_request(id, request);
}

void Connection::write_queued() {
  auto now = clock::now();
  while (link_.ready() && !queue_.empty()) {
    std::uint64_t id = queue_.front();
    auto it = requests_.find(id);
    if (it == requests_.end()) {
      queue_.pop_front();  // expired while queued
      continue;
    }
    auto todo = window_.on(SendWindow::offered{now, it->second.deadline, protocol_.in_flight()});
    if (std::holds_alternative<SendWindow::hold>(todo[0])) return;  // the next answer offers it again
    queue_.pop_front();
    if (std::holds_alternative<SendWindow::write>(todo[0])) {
      write_request(id, it->second);
      continue;
    }
    // Its handler may send (queued behind the rest) or close this connection
    // (the loop condition sees that).
    complete(id, unsent(it->second));
  }
}

Response Connection::unsent(const Request& request) const {
  // Written before and queued again after a drop: that copy's outcome is
  // unknown, so this is a plain time-out.
  if (request.resends > 0) return failure(make_error_code(errc::timed_out));
  Response response = failure(pending_error());
  response.not_run = true;
  response.unsent = true;
  if (response.detail.empty()) {
    response.detail = fmt::format(
        "not sent: the server would have answered it in about {} ms ({} commands in flight on this connection, at "
        "most {}), past its deadline",
        std::chrono::duration_cast<std::chrono::milliseconds>(window_.expected(protocol_.in_flight())).count(),
        protocol_.in_flight(), window_.limit());
  }
  return response;
}

void Connection::write_request(std::uint64_t id, Request& request) {
  request.ahead = protocol_.in_flight();
  protocol_.send_encoded(id, request.command, plain_out_);
  request.in_flight = true;
  request.written = clock::now();
  // Only an idempotent command is ever written again.
  if (!request.idempotent) std::string().swap(request.command);
  loop_.schedule_flush(this);
}

void Connection::send(const std::vector<std::string>& argv, clock::time_point deadline, bool idempotent,
                      Handler handler) {
  std::string command;
  LinkProtocol::encode_command(argv, command);
  send_encoded(std::move(command), deadline, idempotent, std::move(handler));
}

void Connection::send_encoded(std::string command, clock::time_point deadline, bool idempotent, Handler handler) {
  if (link_.closed()) {
    handler(Response{make_error_code(errc::shut_down), {}});
    return;
  }
  std::uint64_t id = next_id_++;
  Request& request = requests_[id];
  request.command = std::move(command);
  request.deadline = deadline;
  request.idempotent = idempotent;
  request.handler = std::move(handler);
  watch_deadline(deadline, id);
  // Made past its deadline already (its caller's call waited for the I/O
  // thread that long): never written, it fails unsent when the deadline
  // timer runs, in the loop's next turn (a handler never runs inside this
  // call). It is not queued either: nothing behind it waits for it.
  if (deadline <= clock::now()) return;
  // Written at once with nothing queued and room in the window: the link is
  // not saturated, so there is nothing to judge (and its handler never runs
  // inside this call). Otherwise it waits its turn in the queue.
  if (link_.ready() && queue_.empty() && (window_.limit() == 0 || protocol_.in_flight() < window_.limit())) {
    write_request(id, request);
  } else {
    queue_.push_back(id);
  }
}

bool Connection::send_subscription(const std::vector<std::string>& argv) {
  if (!link_.ready()) return false;
  if (!protocol_.encode_subscription(argv, plain_out_)) return false;
  loop_.schedule_flush(this);
  return true;
}

void Connection::watch_deadline(clock::time_point deadline, std::uint64_t id) {
  deadlines_.emplace_back(deadline, id);
  std::push_heap(deadlines_.begin(), deadlines_.end(), std::greater<deadline_entry>{});
  if (deadline_timer_ != 0 && deadline_timer_at_ <= deadline) return;
  loop_.cancel(deadline_timer_);
  deadline_timer_at_ = deadline;
  deadline_timer_ = loop_.at(deadline, [this] {
    deadline_timer_ = 0;
    expire_due();
  });
}

void Connection::pop_deadline() {
  std::pop_heap(deadlines_.begin(), deadlines_.end(), std::greater<deadline_entry>{});
  deadlines_.pop_back();
}

void Connection::expire_due() {
  // Answers already on the socket are read first: a loop that runs behind (a
  // busy or starved I/O thread) runs its timers before it polls the sockets,
  // and would time out commands whose answers it merely had not read yet.
  read_arrived();
  auto now = clock::now();
  while (!deadlines_.empty() && (deadlines_.front().first <= now || requests_.count(deadlines_.front().second) == 0)) {
    auto id = deadlines_.front().second;
    pop_deadline();
    expire(id);  // no-op for a command that completed meanwhile
  }
  if (deadlines_.empty()) {
    std::vector<deadline_entry>().swap(deadlines_);  // a burst's worth of storage goes with it
    return;
  }
  auto next = deadlines_.front();
  pop_deadline();
  watch_deadline(next.first, next.second);
}

void Connection::drop_stale_deadlines() {
  // Amortised O(1) per completion: a sweep leaves only live entries, and the
  // next needs as many completions again as there are live ones.
  constexpr std::size_t few = 64;
  if (deadlines_.size() <= few || deadlines_.size() <= 2 * requests_.size()) return;
  std::vector<deadline_entry> live;
  live.reserve(requests_.size());
  for (const auto& entry : deadlines_) {
    if (requests_.count(entry.second) != 0) live.push_back(entry);
  }
  std::make_heap(live.begin(), live.end(), std::greater<deadline_entry>{});
  deadlines_.swap(live);
  // The timer stays set for the earliest deadline it was set for: it finds
  // nothing due then and re-arms for the next, or nothing left.
}

void Connection::expire(std::uint64_t id) {
  auto it = requests_.find(id);
  if (it == requests_.end()) return;
  // A late reply to a command in flight finds no request and is dropped.
  // It still holds its place in the window until then: the server has it.
  if (it->second.in_flight) {
    complete(id, Response{make_error_code(errc::timed_out), {}});
    return;
  }
  complete(id, unsent(it->second));
}

void Connection::complete(std::uint64_t id, Response&& response) {
  auto it = requests_.find(id);
  if (it == requests_.end()) return;
  Handler handler = std::move(it->second.handler);
  requests_.erase(it);
  release_spare_buckets(requests_);
  drop_stale_deadlines();
  if (handler) handler(std::move(response));
}

}  // namespace warden::detail
