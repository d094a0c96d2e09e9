#include "topology/key_slot.hpp"

namespace warden::detail::keys {

std::uint16_t slot(std::string_view key) {
  // Only the part between the first '{' and the next '}' is hashed, if non-empty.
  if (auto open = key.find('{'); open != std::string_view::npos) {
    auto close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) key = key.substr(open + 1, close - open - 1);
  }
  std::uint16_t crc = 0;
  for (unsigned char byte : key) {
    crc ^= static_cast<std::uint16_t>(byte) << 8;
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 0x8000) ? static_cast<std::uint16_t>((crc << 1) ^ 0x1021) : static_cast<std::uint16_t>(crc << 1);
    }
  }
  return crc % 16384;
}

}  // namespace warden::detail::keys
