#include "lock/keys.hpp"

namespace warden::detail::keys {
namespace {

// Redis's rule: a key's hash tag is what lies between its first '{' and the
// first '}' after that, if it is not empty; a key without one hashes whole.
bool has_hash_tag(std::string_view name) {
  auto open = name.find('{');
  if (open == std::string_view::npos) return false;
  auto close = name.find('}', open + 1);
  return close != std::string_view::npos && close > open + 1;
}

}  // namespace

std::optional<std::string> name_problem(std::string_view name) {
  if (has_hash_tag(name) || name.find('}') == std::string_view::npos) return std::nullopt;
  return std::string(
             "a name without a non-empty {hash tag} must not contain '}': the lock's other keys could not share its "
             "cluster slot (give it a tag, e.g. '{") +
         std::string(name.substr(0, 16)) + "...}')";
}

std::string prefixed(std::string_view prefix, std::string_view name) {
  // Sized once: a lock core keeps its channel's name for as long as it
  // lives, and growing by appends would leave it up to twice the size.
  bool tag = !has_hash_tag(name);
  std::string out;
  out.reserve(prefix.size() + name.size() + (tag ? 3 : 1));
  out += prefix;
  out += tag ? ":{" : ":";
  out += name;
  if (tag) out += '}';
  return out;
}

std::string tagged(std::string_view name) {
  if (has_hash_tag(name)) return std::string(name);
  std::string out;
  out += '{';
  out += name;
  out += '}';
  return out;
}

std::string suffixed(std::string_view name, std::string_view suffix) {
  std::string out = tagged(name);
  out += ':';
  out += suffix;
  return out;
}

constexpr std::string_view lock_channel_prefix = "redisson_lock__channel";

std::string lock_channel(std::string_view name) { return prefixed(lock_channel_prefix, name); }

std::size_t lock_channel_name_at(std::string_view name) {
  // As prefixed() lays it out: the prefix, ':' and, for a name without its
  // own hash tag, '{'.
  return lock_channel_prefix.size() + (has_hash_tag(name) ? 1 : 2);
}

std::string unlock_latch(std::string_view name, std::string_view request_id) {
  std::string out = prefixed("redisson_unlock_latch", name);
  out += ':';
  out += request_id;
  return out;
}

std::string acquire_cancel(std::string_view name, std::string_view attempt_id) {
  std::string out = prefixed("warden_acquire_cancel", name);
  out += ':';
  out += attempt_id;
  return out;
}

std::string fair_queue(std::string_view name) { return prefixed("redisson_lock_queue", name); }

std::string fair_timeouts(std::string_view name) { return prefixed("redisson_lock_timeout", name); }

std::string fenced_token(std::string_view name) { return prefixed("redisson_lock_token", name); }

std::string rwlock_channel(std::string_view name) { return prefixed("redisson_rwlock", name); }

std::string rwlock_timeout_prefix(std::string_view name, std::string_view owner) {
  std::string suffix(owner);
  suffix += ":rwlock_timeout";
  return suffixed(name, suffix);
}

std::string latch_channel(std::string_view name) {
  constexpr std::string_view prefix = "redisson_countdownlatch__channel__{";
  std::string out;
  out.reserve(prefix.size() + name.size() + 1);
  out += prefix;
  out += name;
  out += '}';
  return out;
}

}  // namespace warden::detail::keys
