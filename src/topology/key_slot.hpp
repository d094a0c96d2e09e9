// The Redis Cluster slot of a key: what the router routes by. In the keys
// namespace beside the lock's key names, which are built so that every key of
// one lock has the lock name's slot.
#pragma once

#include <cstdint>
#include <string_view>

namespace warden::detail::keys {

// The Redis Cluster slot of a key (CRC16/XMODEM of its hash tag, mod 16384).
std::uint16_t slot(std::string_view key);

}  // namespace warden::detail::keys
