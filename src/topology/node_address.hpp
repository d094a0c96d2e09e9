// Where a server is reached: as a cluster announces it, or a sentinel names
// it.
#pragma once

#include <cstdint>
#include <string>

namespace warden::detail {

struct NodeAddress {
  std::string host;  // as announced; an IPv6 address without brackets
  std::uint16_t port = 0;

  // "host:port", "[v6]:port" for an IPv6 address.
  std::string to_string() const;
  friend bool operator==(const NodeAddress& a, const NodeAddress& b) { return a.port == b.port && a.host == b.host; }
  friend bool operator!=(const NodeAddress& a, const NodeAddress& b) { return !(a == b); }
};

}  // namespace warden::detail
