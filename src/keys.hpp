// Redis key and channel names of a lock, as Redisson lays them out.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace warden::detail::keys {

// "<prefix>:{name}", or "<prefix>:name" when the name carries its own hash tag,
// so that every key of one lock hashes to the same Redis Cluster slot.
std::string prefixed(std::string_view prefix, std::string_view name);

// "{name}:<suffix>", or "name:<suffix>" when the name carries its own hash tag.
std::string suffixed(std::string_view name, std::string_view suffix);

// redisson_lock__channel:{name}
std::string lock_channel(std::string_view name);

// redisson_unlock_latch:{name}:<request-id>
std::string unlock_latch(std::string_view name, std::string_view request_id);

// The Redis Cluster slot of a key (CRC16/XMODEM of its hash tag, mod 16384).
std::uint16_t slot(std::string_view key);

}  // namespace warden::detail::keys
