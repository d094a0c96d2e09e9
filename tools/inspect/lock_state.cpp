#include "inspect/lock_state.hpp"

#include <algorithm>

#include "lock/keys.hpp"

namespace warden::inspect {
namespace {

bool is_count(const std::string& value) {
  return !value.empty() && std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
}

long long count_of(const std::string& value) {
  try {
    return std::stoll(value);
  } catch (const std::exception&) {
    return 0;  // beyond long long: not a count anyone wrote
  }
}

bool is_number(const std::string& value) {
  std::size_t digits = !value.empty() && value[0] == '-' ? 1 : 0;
  return value.size() > digits && is_count(value.substr(digits));
}

// Redisson's RedissonObject.prefixName / suffixName.
std::string prefix_name(const std::string& prefix, const std::string& name) {
  return name.find('{') != std::string::npos ? prefix + ":" + name : prefix + ":{" + name + "}";
}
std::string suffix_name(const std::string& name, const std::string& suffix) {
  return name.find('{') != std::string::npos ? name + ":" + suffix : "{" + name + "}:" + suffix;
}

std::string hex_of(const std::string& bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::string address_of(const RawLock& raw, const std::string& client_id) {
  auto it = raw.client_addresses.find(client_id);
  return it == raw.client_addresses.end() ? std::string() : it->second;
}

}  // namespace

std::string LockKeys::read_hold(const std::string& owner, long long n) const {
  return detail::keys::rwlock_timeout_prefix(name, owner) + ":" + std::to_string(n);
}

LockKeys keys_of(const std::string& name) {
  LockKeys keys;
  keys.name = name;
  keys.queue = detail::keys::fair_queue(name);
  keys.deadlines = detail::keys::fair_timeouts(name);
  keys.token = detail::keys::fenced_token(name);
  keys.lock_channel = detail::keys::lock_channel(name);
  keys.rw_channel = detail::keys::rwlock_channel(name);
  keys.semaphore_channel = prefix_name("redisson_sc", name);
  keys.permit_timeouts = suffix_name(name, "timeout");
  keys.latch_channel = detail::keys::latch_channel(name);
  return keys;
}

void split_owner(const std::string& field, std::string& client_id, std::string& thread, bool& writer) {
  std::string owner = field;
  writer = owner.size() > 6 && owner.compare(owner.size() - 6, 6, ":write") == 0;
  if (writer) owner.resize(owner.size() - 6);
  auto colon = owner.rfind(':');
  if (colon == std::string::npos) {
    client_id.clear();
    thread = owner;
  } else {
    client_id = owner.substr(0, colon);
    thread = owner.substr(colon + 1);
  }
}

bool looks_like_lock(const std::vector<std::pair<std::string, std::string>>& fields) {
  if (fields.empty()) return false;
  for (auto& [field, value] : fields) {
    if (field == "mode") {
      if (value != "read" && value != "write") return false;
    } else if (!is_count(value)) {
      return false;
    }
  }
  return true;
}

std::vector<std::string> read_hold_keys(const std::string& name, const RawLock& raw) {
  std::vector<std::string> out;
  bool rw = false;
  for (auto& [field, value] : raw.fields) rw |= field == "mode";
  if (raw.type != "hash" || !rw) return out;
  auto keys = keys_of(name);
  for (auto& [field, value] : raw.fields) {
    if (field == "mode" || !is_count(value)) continue;
    if (field.size() > 6 && field.compare(field.size() - 6, 6, ":write") == 0) continue;
    // A reader's holds are numbered 1..count; more than a few thousand is
    // not a count warden or Redisson wrote, and not worth a key each.
    auto count = std::min(count_of(value), 1000LL);
    for (long long n = 1; n <= count; ++n) out.push_back(keys.read_hold(field, n));
  }
  return out;
}

std::vector<std::string> channels_to_count(const std::string& name, const RawLock& raw) {
  auto keys = keys_of(name);
  std::vector<std::string> out;
  bool rw = false;
  for (auto& [field, value] : raw.fields) rw |= field == "mode";
  if (rw) {
    out.push_back(keys.rw_channel);
  } else if (raw.type == "string" || raw.permits_type == "zset") {
    out.push_back(keys.semaphore_channel);
    if (raw.permits_type != "zset") out.push_back(keys.latch_channel);
  } else {
    out.push_back(keys.lock_channel);
  }
  for (auto& waiter : raw.queue) out.push_back(keys.waiter_channel(waiter));
  return out;
}

LockState interpret(const std::string& name, const RawLock& raw) {
  LockState state;
  state.name = name;
  state.key_type = raw.type;
  state.pttl = raw.pttl;
  state.token = raw.token;
  auto keys = keys_of(name);

  bool has_mode = false;
  for (auto& [field, value] : raw.fields) {
    if (field == "mode") {
      has_mode = true;
      state.mode = value;
    }
  }
  bool fair = !raw.queue.empty() || !raw.deadlines.empty();
  bool pes = raw.permits_type == "zset" &&
             (raw.type == "none" || (raw.type == "string" && raw.value && is_number(*raw.value)));
  if (pes) {
    state.kind = "pes";
    state.counter = raw.value ? count_of(*raw.value) : 0;  // missing: no permits available
  } else if (raw.type == "string" && raw.value && is_number(*raw.value)) {
    state.kind = "counter";
    state.counter = std::stoll(*raw.value);
  } else if (raw.type == "none") {
    state.kind = fair ? "fair" : raw.token ? "fenced" : "none";
  } else if (raw.type == "string") {
    state.kind = "not a lock";
    state.problem = "the key is a string that is not a number: neither a lock nor a semaphore or latch";
  } else if (raw.type != "hash") {
    state.kind = "not a lock";
    state.problem = "the key is a " + raw.type + ", not a lock's hash";
  } else if (!looks_like_lock(raw.fields)) {
    state.kind = "not a lock";
    state.problem = "the key is a hash whose fields are not hold counts";
  } else if (has_mode) {
    state.kind = "rw";
  } else {
    state.kind = fair ? "fair" : raw.token ? "fenced" : "lock";
  }

  if (pes) {
    for (auto& [member, score] : raw.permits) {
      Permit permit;
      permit.id = hex_of(member);
      if (score < permit_never_expires) {
        permit.expiry_ms = score;
        permit.expires_in_ms = score - raw.now_ms;
      }
      state.permits.push_back(std::move(permit));
    }
  }

  if (state.kind != "not a lock") {
    for (auto& [field, value] : raw.fields) {
      if (field == "mode") continue;
      Holder holder;
      holder.field = field;
      holder.count = count_of(value);
      split_owner(field, holder.client_id, holder.thread, holder.writer);
      if (has_mode && !holder.writer) {
        for (long long n = 1; n <= std::min(holder.count, 1000LL); ++n) {
          auto it = raw.read_hold_ttls.find(keys.read_hold(field, n));
          holder.read_hold_ttls.push_back(it == raw.read_hold_ttls.end() ? -2 : it->second);
        }
      }
      holder.address = address_of(raw, holder.client_id);
      state.holders.push_back(std::move(holder));
    }
    // The writer first, then readers, each group by owner: stable output.
    std::stable_sort(state.holders.begin(), state.holders.end(), [](const Holder& a, const Holder& b) {
      if (a.writer != b.writer) return a.writer;
      return a.field < b.field;
    });
  }

  for (auto& id : raw.queue) {
    Waiter waiter;
    waiter.id = id;
    bool writer = false;
    split_owner(id, waiter.client_id, waiter.thread, writer);
    if (auto it = raw.deadlines.find(id); it != raw.deadlines.end()) {
      waiter.deadline_ms = it->second;
      waiter.deadline_in_ms = it->second - raw.now_ms;
    }
    waiter.channel = keys.waiter_channel(id);
    if (auto it = raw.subscribers.find(waiter.channel); it != raw.subscribers.end()) waiter.subscribers = it->second;
    waiter.address = address_of(raw, waiter.client_id);
    state.queue.push_back(std::move(waiter));
  }

  auto count_channel = [&](const std::string& channel) {
    auto it = raw.subscribers.find(channel);
    state.channels.emplace_back(channel, it == raw.subscribers.end() ? 0 : it->second);
  };
  if (state.kind == "counter" || state.kind == "pes") {
    count_channel(keys.semaphore_channel);
    if (state.kind == "counter") count_channel(keys.latch_channel);
    return state;
  }
  // The lock's own channel; a fair lock's per-waiter channels are in the queue.
  count_channel(has_mode ? keys.rw_channel : keys.lock_channel);
  return state;
}

}  // namespace warden::inspect
