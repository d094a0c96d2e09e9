#include "io/connection.hpp"

#include <fmt/format.h>

#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>

#include <algorithm>
#include <functional>
#include <random>

#include <warden/error.hpp>

#include "io/spare_buckets.hpp"
#include "io/tls_session.hpp"

namespace warden::detail {
namespace {

// Output buffers keep their capacity between writes, which saves an
// allocation per write; but not a burst's worth (a thousand commands queued
// at once is a megabyte), or memory would stay at the high-water mark.
constexpr std::size_t kept_buffer_bytes = 16 * 1024;
constexpr std::size_t kept_events = 64;

void trim(std::string& buffer) {
  if (buffer.capacity() > kept_buffer_bytes) std::string().swap(buffer);
}

std::uint64_t random_seed() {
  std::random_device device;
  return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

// Errors that reconnecting will not cure: what is queued fails at once
// instead of waiting for a connection that will be refused the same way
// (wrong credentials, a certificate not trusted, a peer that is not Redis).
bool permanent(std::error_code why) {
  return why == errc::authentication_failed || why == errc::tls_verify_failed || why == errc::tls_handshake_failed ||
         why == errc::protocol_error;
}

// The hint for a plaintext link that a TLS port would explain.
constexpr const char* tls_hint = "the server may expect TLS: use rediss://";

constexpr std::size_t read_buffer_size = 64 * 1024;

// A libuv error in words a reader can search for: "connection refused
// (ECONNREFUSED)".
std::string uv_error_text(int status) { return fmt::format("{} ({})", uv_strerror(status), uv_err_name(status)); }

// "host:port", or "[v6]:port" for an IPv6 address (as a URL writes it, so
// that the port cannot be read as a part of the address).
std::string host_and_port(const std::string& host, std::uint16_t port) {
  if (host.find(':') != std::string::npos) return fmt::format("[{}]:{}", host, port);
  return fmt::format("{}:{}", host, port);
}

}  // namespace

// The libuv handle of one connect attempt and the requests made on it. It
// outlives the Connection's interest in it: libuv closes handles
// asynchronously, so an abandoned socket (owner null) frees itself from its
// close callback (or, while a name lookup is running, from that callback).
struct Connection::Socket {
  union {
    uv_tcp_t tcp;
    uv_pipe_t pipe;
  } handle{};
  uv_getaddrinfo_t lookup{};
  uv_connect_t connect_request{};
  uv_write_t write_request{};
  Connection* owner = nullptr;
  bool handle_open = false;
  bool looking_up = false;
  char buffer[read_buffer_size];

  uv_stream_t* stream() { return reinterpret_cast<uv_stream_t*>(&handle); }

  static void connected(uv_connect_t* request, int status) {
    auto* socket = static_cast<Socket*>(request->data);
    if (socket->owner != nullptr) socket->owner->on_transport_connected(status);
  }
  uv_handle_t* as_handle() { return reinterpret_cast<uv_handle_t*>(&handle); }

  // The owner lets go. Frees the socket once libuv is done with it.
  void abandon() {
    owner = nullptr;
    if (looking_up) return;  // the lookup callback frees it
    if (handle_open) {
      uv_close(as_handle(), [](uv_handle_t* h) { delete static_cast<Socket*>(h->data); });
    } else {
      delete this;
    }
  }
};

Connection::Connection(EventLoop& loop, ConnectionOptions options)
    : loop_(loop),
      options_(std::move(options)),
      server_(options_.unix_socket.empty() ? host_and_port(options_.host, options_.port) : options_.unix_socket),
      link_(Backoff(options_.backoff_min, options_.backoff_max, random_seed())) {}

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

void Connection::connect() {
  reconnect_timer_ = 0;
  if (!link_.begin_connect()) return;
  answered_ = false;
  socket_ = new Socket;
  socket_->owner = this;
  connect_timer_ = loop_.after(options_.connect_timeout, [this] {
    connect_timer_ = 0;
    if (socket_ != nullptr && socket_->handle_open && tls_ && !tls_->established() && !transport_up_) {
      drop(make_error_code(errc::tls_handshake_failed),
           fmt::format("TLS handshake timed out after {} ms", options_.connect_timeout.count()));
    } else if (transport_up_) {
      // A TLS port that waits for a handshake instead of closing looks so.
      drop(make_error_code(errc::connection_refused),
           fmt::format("no answer to the set-up commands within {} ms{}", options_.connect_timeout.count(),
                       tls_ || !options_.unix_socket.empty() ? "" : " (if the server expects TLS, use rediss://)"));
    } else {
      drop(make_error_code(errc::connection_refused),
           fmt::format("connect timed out after {} ms", options_.connect_timeout.count()));
    }
  });
  if (!options_.unix_socket.empty()) {
    uv_pipe_init(loop_.uv(), &socket_->handle.pipe, 0);
    socket_->handle.pipe.data = socket_;
    socket_->handle_open = true;
    socket_->connect_request.data = socket_;
    uv_pipe_connect(&socket_->connect_request, &socket_->handle.pipe, options_.unix_socket.c_str(),
                    Socket::connected);
    return;
  }
  sockaddr_in6 address6{};
  sockaddr_in address4{};
  if (uv_ip4_addr(options_.host.c_str(), options_.port, &address4) == 0) {
    connect_to(reinterpret_cast<const sockaddr*>(&address4));
    return;
  }
  if (uv_ip6_addr(options_.host.c_str(), options_.port, &address6) == 0) {
    connect_to(reinterpret_cast<const sockaddr*>(&address6));
    return;
  }
  // A host name: looked up on libuv's thread pool, never blocking the loop.
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  socket_->looking_up = true;
  socket_->lookup.data = socket_;
  std::string port = std::to_string(options_.port);
  int rc = uv_getaddrinfo(
      loop_.uv(), &socket_->lookup,
      [](uv_getaddrinfo_t* request, int status, addrinfo* result) {
        auto* socket = static_cast<Socket*>(request->data);
        socket->looking_up = false;
        Connection* owner = socket->owner;
        if (owner == nullptr) {
          uv_freeaddrinfo(result);
          delete socket;
          return;
        }
        if (status != 0 || result == nullptr) {
          uv_freeaddrinfo(result);
          owner->drop(make_error_code(errc::connection_refused),
                      fmt::format("cannot resolve {}: {}", owner->options_.host, uv_strerror(status)));
          return;
        }
        owner->connect_to(result->ai_addr);
        uv_freeaddrinfo(result);
      },
      options_.host.c_str(), port.c_str(), &hints);
  if (rc != 0) {
    socket_->looking_up = false;
    drop(make_error_code(errc::connection_refused), fmt::format("cannot resolve {}: {}", options_.host, uv_strerror(rc)));
  }
}

void Connection::connect_to(const sockaddr* address) {
  uv_tcp_init(loop_.uv(), &socket_->handle.tcp);
  socket_->handle.tcp.data = socket_;
  socket_->handle_open = true;
  // Commands are small and answered at once: never hold one back to fill a
  // segment.
  uv_tcp_nodelay(&socket_->handle.tcp, 1);
  socket_->connect_request.data = socket_;
  int rc = uv_tcp_connect(&socket_->connect_request, &socket_->handle.tcp, address, Socket::connected);
  if (rc != 0) drop(make_error_code(errc::connection_refused), uv_error_text(rc));
}

void Connection::on_transport_connected(int status) {
  if (status != 0) {
    drop(make_error_code(errc::connection_refused), uv_error_text(status));
    return;
  }
  int rc = uv_read_start(
      socket_->stream(),
      [](uv_handle_t* handle, std::size_t, uv_buf_t* buf) {
        auto* socket = static_cast<Socket*>(handle->data);
        *buf = uv_buf_init(socket->buffer, sizeof socket->buffer);
      },
      [](uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
        auto* socket = static_cast<Socket*>(stream->data);
        Connection* owner = socket->owner;
        if (owner == nullptr || nread == 0) return;
        if (nread < 0) {
          owner->on_read_failed(static_cast<int>(nread));
          return;
        }
        owner->on_read(buf->base, static_cast<std::size_t>(nread));
      });
  if (rc != 0) {
    drop(make_error_code(errc::connection_refused), uv_error_text(rc));
    return;
  }
  uv_os_fd_t fd = -1;
  if (uv_fileno(socket_->as_handle(), &fd) == 0) {
    socket_fd_ = fd;
    loop_.watch_hangup(fd);
  }
  start_session();
}

void Connection::start_session() {
  if (options_.tls) {
    tls_ = std::make_unique<TlsSession>(options_.tls, options_.tls_server_name);
    tls_->start();
    loop_.schedule_flush(this);
    return;  // set-up follows the handshake (on_read)
  }
  transport_up_ = true;
  setup();
}

void Connection::on_read_failed(int status) {
  if (!tls_ && options_.unix_socket.empty() && transport_up_ && !link_.ready() && !answered_) {
    // Closed before the server said a word to our set-up commands: a TLS
    // port does that to plaintext (Redis resets the connection). Twice in a
    // row, it fails what is queued (LinkState::refuses_plaintext).
    drop(make_error_code(errc::connection_refused),
         fmt::format("the server closed the connection without answering the set-up commands ({}); {}",
                     status == UV_EOF ? std::string("end of stream") : uv_error_text(status), tls_hint),
         true);
    return;
  }
  if (status == UV_EOF && tls_) {
    // A close in the middle of the handshake says something about TLS (the
    // server refused our certificate, or speaks another protocol).
    if (auto error = tls_->receive_eof()) {
      drop(error, tls_->error_text());
      return;
    }
  }
  drop(make_error_code(errc::connection_lost),
       status == UV_EOF ? std::string("closed by the server") : uv_error_text(status));
}

void Connection::on_read(const char* data, std::size_t size) {
  if (!tls_) {
    on_bytes(data, size);
    return;
  }
  std::string plain;
  if (auto error = tls_->receive(data, size, plain)) {
    drop(error, tls_->error_text());
    return;
  }
  loop_.schedule_flush(this);  // handshake records, alerts, key updates
  Socket* socket = socket_;
  if (!transport_up_ && tls_->established()) {
    transport_up_ = true;
    setup();
    if (socket_ != socket) return;
  }
  if (!plain.empty()) on_bytes(plain.data(), plain.size());
}

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
  last_reply_ = clock::now();
  probe_outstanding_ = false;  // any answer shows the server is there
  Socket* socket = socket_;
  for (auto& event : events) {
    if (event.what == LinkProtocol::Event::type::reply) {
      // A reply to a command that timed out meanwhile finds no request.
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
      if (response.error) return;      // a transport failure: the drop is handled already
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
      if (--setup_pending_ == 0) become_ready();
    };
    write_request(id, request);
  }
}

void Connection::become_ready() {
  loop_.cancel(connect_timer_);
  connect_timer_ = 0;
  bool reconnect = link_.ever_connected();
  link_.connected();
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

void Connection::write_queued() {
  while (link_.ready() && !queue_.empty()) {
    std::uint64_t id = queue_.front();
    queue_.pop_front();
    auto it = requests_.find(id);
    if (it == requests_.end()) continue;  // expired while queued
    write_request(id, it->second);
  }
}

void Connection::write_request(std::uint64_t id, Request& request) {
  protocol_.send_encoded(id, request.command, plain_out_);
  request.in_flight = true;
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
  if (link_.ready() && queue_.empty()) {
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

void Connection::flush_output() {
  // Nothing is queued for a socket still connecting; it is flushed once up.
  if (socket_ == nullptr || !socket_->handle_open || socket_fd_ < 0) return;
  if (tls_) {
    if (!plain_out_.empty()) {
      if (auto error = tls_->send(plain_out_.data(), plain_out_.size())) {
        drop(error, tls_->error_text());
        return;
      }
      plain_out_.clear();
    }
    wire_out_ += tls_->take_output();
  } else if (wire_out_.empty()) {
    wire_out_.swap(plain_out_);
    trim(plain_out_);
  } else {
    wire_out_ += plain_out_;
    plain_out_.clear();
  }
  if (write_in_progress_ || wire_out_.empty()) return;
  // Most writes complete at once: try that first, and hand libuv only what
  // the socket could not take. send(2) with MSG_NOSIGNAL: a user thread
  // writing in place must not get SIGPIPE from a server that went away.
  ssize_t written = -1;
  do {
    written = ::send(socket_fd_, wire_out_.data(), wire_out_.size(), MSG_NOSIGNAL);
  } while (written < 0 && errno == EINTR);
  int error = written < 0 ? errno : 0;
  if (error == EAGAIN || error == EWOULDBLOCK) written = 0;
  if (written < 0) {
    drop(make_error_code(errc::connection_lost), uv_error_text(uv_translate_sys_error(error)));
    return;
  }
  if (static_cast<std::size_t>(written) == wire_out_.size()) {
    wire_out_.clear();
    trim(wire_out_);
    return;
  }
  writing_.assign(wire_out_, static_cast<std::size_t>(written), std::string::npos);
  wire_out_.clear();
  trim(wire_out_);
  write_in_progress_ = true;
  // libuv writes the rest with write(2), from here and from whichever thread
  // runs the loop when the socket can take more.
  loop_.shield_pipe_signal();
  socket_->write_request.data = socket_;
  uv_buf_t buffer = uv_buf_init(writing_.data(), static_cast<unsigned>(writing_.size()));
  int rc = uv_write(&socket_->write_request, socket_->stream(), &buffer, 1, [](uv_write_t* request, int status) {
    auto* socket = static_cast<Socket*>(request->data);
    if (socket->owner != nullptr) socket->owner->on_written(status);
  });
  if (rc != 0) {
    write_in_progress_ = false;
    drop(make_error_code(errc::connection_lost), uv_strerror(rc));
  }
}

void Connection::on_written(int status) {
  write_in_progress_ = false;
  writing_.clear();
  trim(writing_);
  if (status != 0) {
    drop(make_error_code(errc::connection_lost), uv_strerror(status));
    return;
  }
  if (!wire_out_.empty() || !plain_out_.empty()) loop_.schedule_flush(this);
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
  auto now = clock::now();
  while (!deadlines_.empty() &&
         (deadlines_.front().first <= now || requests_.count(deadlines_.front().second) == 0)) {
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
  complete(id, it->second.in_flight ? Response{make_error_code(errc::timed_out), {}} : failure(pending_error()));
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

void Connection::release_socket() {
  loop_.cancel_flush(this);
  if (socket_fd_ >= 0) {
    loop_.unwatch_hangup(socket_fd_);
    socket_fd_ = -1;
  }
  if (socket_ != nullptr) {
    Socket* socket = socket_;
    socket_ = nullptr;
    socket->abandon();
  }
  tls_.reset();
  transport_up_ = false;
  plain_out_.clear();
  wire_out_.clear();
  writing_.clear();
  write_in_progress_ = false;
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
  auto delay = link_.failed(why, closed_unanswered);
  last_failure_ = detail;
  if (!was_ready) ++failed_attempts_;
  // The first failure of a streak, and any that says something new, at info;
  // the same failure again (a server that stays away) at debug.
  bool repeat = !was_ready && detail == logged_failure_;
  if (!repeat) logged_failure_ = detail;
  log(was_ready ? log_level::warning : repeat ? log_level::debug : log_level::info,
      fmt::format("warden: {} {}: {}; retrying in {} ms{}", describe(), was_ready ? "lost" : "failed", detail,
                  delay.count(), repeat || was_ready ? "" : " (repeats of this failure are logged at debug level)"));
  report(was_ready ? connection_state::down : connection_state::connect_failed, false, why, detail, delay);
  reconnect_timer_ = loop_.after(delay, [this] { connect(); });
  // Handlers run last: what they send now is queued for the next connection.
  for (auto id : lost) complete(id, failure(make_error_code(errc::connection_lost)));
  if (permanent(why) || link_.refuses_plaintext()) {
    // Waiting will not fix credentials, trust or a port that speaks TLS:
    // fail what is queued now.
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
  link_.close();
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
