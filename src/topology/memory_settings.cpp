#include "topology/memory_settings.hpp"

#include <charconv>
#include <string_view>

namespace warden::detail {
namespace {

std::optional<unsigned long long> number(std::string_view text) {
  unsigned long long value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The value of `field` in INFO's "field:value\r\n" lines.
std::optional<std::string_view> info_field(std::string_view info, std::string_view field) {
  std::size_t at = 0;
  while (at < info.size()) {
    auto end = info.find('\n', at);
    if (end == std::string_view::npos) end = info.size();
    auto line = info.substr(at, end - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > field.size() && line.compare(0, field.size(), field) == 0 && line[field.size()] == ':') {
      return line.substr(field.size() + 1);
    }
    at = end + 1;
  }
  return std::nullopt;
}

}  // namespace

std::optional<MemorySettings> memory_settings_from_info(const Reply& info) {
  if (info.type != Reply::kind::string && info.type != Reply::kind::status) return std::nullopt;
  auto limit = info_field(info.str, "maxmemory");
  auto policy = info_field(info.str, "maxmemory_policy");
  if (!limit || !policy || policy->empty()) return std::nullopt;
  auto bytes = number(*limit);
  if (!bytes) return std::nullopt;
  return MemorySettings{*bytes, std::string(*policy)};
}

std::optional<MemorySettings> memory_settings_from_config(const Reply& config) {
  if (config.type != Reply::kind::array) return std::nullopt;
  std::optional<unsigned long long> bytes;
  std::optional<std::string> policy;
  for (std::size_t i = 0; i + 1 < config.elements.size(); i += 2) {
    const auto& name = config.elements[i].str;
    const auto& value = config.elements[i + 1].str;
    if (name == "maxmemory") {
      bytes = number(value);
      if (!bytes) return std::nullopt;
    } else if (name == "maxmemory-policy") {
      policy = value;
    }
  }
  if (!bytes || !policy || policy->empty()) return std::nullopt;
  return MemorySettings{*bytes, *policy};
}

bool may_evict_locks(const MemorySettings& settings) {
  return settings.maxmemory > 0 && settings.policy != "noeviction";
}

}  // namespace warden::detail
