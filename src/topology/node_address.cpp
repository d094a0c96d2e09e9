#include "topology/node_address.hpp"

#include <fmt/format.h>

namespace warden::detail {

std::string NodeAddress::to_string() const {
  if (host.find(':') != std::string::npos) return fmt::format("[{}]:{}", host, port);
  return fmt::format("{}:{}", host, port);
}

}  // namespace warden::detail
