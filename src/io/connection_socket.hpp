// The libuv side of a Connection's socket, shared by the files that make up
// Connection (connection.cpp, connection_transport.cpp, connection_requests.cpp).
// Private to src/io.
#pragma once

#include <uv.h>

#include <cstddef>
#include <string>

#include "io/connection.hpp"

namespace warden::detail {
namespace connection_detail {

constexpr std::size_t read_buffer_size = 64 * 1024;

// The hint for a plaintext link that a TLS port would explain.
constexpr const char* tls_hint = "the server may expect TLS: use rediss://";

// A libuv error in words a reader can search for: "connection refused
// (ECONNREFUSED)".
std::string uv_error_text(int status);

}  // namespace connection_detail

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
  char buffer[connection_detail::read_buffer_size];

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

}  // namespace warden::detail
