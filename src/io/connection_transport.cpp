// Connection's transport: the socket of each connect attempt (TCP, a name
// looked up off the loop, or a unix socket), the TLS session over it, bytes
// read and written.
#include <fmt/format.h>

#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>

#include <warden/error.hpp>

#include "io/connection.hpp"
#include "io/connection_socket.hpp"
#include "io/tls_session.hpp"

namespace warden::detail {

using connection_detail::tls_hint;
using connection_detail::uv_error_text;

namespace connection_detail {

std::string uv_error_text(int status) { return fmt::format("{} ({})", uv_strerror(status), uv_err_name(status)); }

}  // namespace connection_detail

namespace {

// Output buffers keep their capacity between writes, which saves an
// allocation per write; but not a burst's worth (a thousand commands queued
// at once is a megabyte), or memory would stay at the high-water mark.
constexpr std::size_t kept_buffer_bytes = 16 * 1024;

void trim(std::string& buffer) {
  if (buffer.capacity() > kept_buffer_bytes) std::string().swap(buffer);
}

}  // namespace

void Connection::connect() {
  reconnect_timer_ = 0;
  if (link_.on(LinkState::connect_due{}).empty()) return;  // not now: the one action is `open`
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
    uv_pipe_connect(&socket_->connect_request, &socket_->handle.pipe, options_.unix_socket.c_str(), Socket::connected);
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
    drop(make_error_code(errc::connection_refused),
         fmt::format("cannot resolve {}: {}", options_.host, uv_strerror(rc)));
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
    loop_.watch_hangup(fd, options_.input_wakes_parked);
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

void Connection::read_arrived() {
  // Bounded: a server still sending fast is read by the loop's own poll.
  constexpr int most_reads = 16;
  for (int i = 0; i < most_reads && socket_ != nullptr && socket_->handle_open && socket_fd_ >= 0; ++i) {
    Socket* socket = socket_;
    // The descriptor is libuv's, non-blocking; its own read finds nothing
    // left (EAGAIN) and waits as usual. End of stream and errors are left
    // for that read to report.
    auto n = ::recv(socket_fd_, socket->buffer, sizeof socket->buffer, MSG_DONTWAIT);
    if (n <= 0) return;
    on_read(socket->buffer, static_cast<std::size_t>(n));
    if (socket_ != socket) return;  // dropped while reading
  }
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

}  // namespace warden::detail
