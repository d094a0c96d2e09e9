#include "inspect/render.hpp"

#include <fmt/format.h>

namespace warden::inspect {
namespace {

std::string json_ttls(const std::vector<long long>& ttls) {
  std::string out = "[";
  for (std::size_t i = 0; i < ttls.size(); ++i) out += (i ? "," : "") + std::to_string(ttls[i]);
  return out + "]";
}

std::string who(const std::string& client_id, const std::string& thread, const std::string& address) {
  std::string out =
      client_id.empty() ? fmt::format("thread {}", thread) : fmt::format("client {} thread {}", client_id, thread);
  if (!address.empty()) out += fmt::format(", connected from {}", address);
  return out;
}

std::string summary(const LockState& state) {
  if (state.kind == "not a lock") return "not a lock: " + state.problem;
  if (state.kind == "none") return "not held";
  if (state.kind == "counter") {
    return "semaphore or count-down latch (a string holding " + std::to_string(*state.counter) + ")";
  }
  if (state.kind == "pes") {
    return fmt::format("permit-expirable semaphore, {} permit{} available, {} acquired", *state.counter,
                       *state.counter == 1 ? "" : "s", state.permits.size());
  }
  std::string kind = state.kind == "rw"       ? "read-write lock"
                     : state.kind == "fair"   ? "fair lock"
                     : state.kind == "fenced" ? "fenced lock"
                                              : "lock";
  if (!state.held()) return kind + ", not held";
  if (state.kind == "rw") return kind + ", held in " + state.mode + " mode";
  return kind + ", held";
}

}  // namespace

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += fmt::format("\\u{:04x}", c);
        } else {
          out += static_cast<char>(c);  // UTF-8 passes through as it is
        }
    }
  }
  return out + "\"";
}

std::string describe_ttl(long long pttl_ms) {
  if (pttl_ms == -1) return "no expiry";
  if (pttl_ms < 0) return "gone";
  if (pttl_ms < 1000) return fmt::format("{} ms", pttl_ms);
  return fmt::format("{:.2f} s", static_cast<double>(pttl_ms) / 1000.0);
}

std::string render_text(const LockState& state) {
  std::string out = fmt::format("{}: {}\n", state.name, summary(state));
  if (state.kind == "not a lock") return out;
  if (state.kind == "counter") {
    out += fmt::format("  semaphore {} permit{} available\n", *state.counter, *state.counter == 1 ? "" : "s");
    out += fmt::format("  latch     count {}\n", *state.counter);
  }
  if (state.kind == "pes") {
    for (auto& permit : state.permits) {
      std::string expiry = "never expires";
      if (permit.expiry_ms) {
        expiry = permit.expires_in_ms > 0 ? fmt::format("expires in {}", describe_ttl(permit.expires_in_ms))
                                          : "expired (reclaimed by the next call)";
      }
      out += fmt::format("  permit    {}  {}\n", permit.id, expiry);
    }
  }
  if (state.pttl != -2) out += fmt::format("  ttl       {}\n", describe_ttl(state.pttl));
  for (auto& holder : state.holders) {
    std::string what = holder.writer ? "writer" : state.kind == "rw" ? "reader" : "holder";
    out += fmt::format("  {:<9} {}  count {}  ({})\n", what, holder.field, holder.count,
                       who(holder.client_id, holder.thread, holder.address));
    if (!holder.read_hold_ttls.empty()) {
      std::string ttls;
      for (auto ttl : holder.read_hold_ttls) ttls += (ttls.empty() ? "" : ", ") + describe_ttl(ttl);
      out += fmt::format("            read holds: {}\n", ttls);
    }
  }
  if (!state.queue.empty()) {
    out += "  queue\n";
    int position = 1;
    for (auto& waiter : state.queue) {
      std::string deadline = "no deadline";
      if (waiter.deadline_ms) {
        deadline = fmt::format("dropped if unseen in {}", describe_ttl(std::max(0LL, waiter.deadline_in_ms)));
      }
      out += fmt::format("    {}. {}  {}  {}  ({})\n", position++, waiter.id, deadline,
                         waiter.subscribers > 0 ? "listening" : "not listening",
                         who(waiter.client_id, waiter.thread, waiter.address));
    }
  }
  if (state.token) out += fmt::format("  token     {}\n", *state.token);
  for (auto& [channel, count] : state.channels) {
    out += fmt::format("  channel   {}  {} subscriber{}\n", channel, count, count == 1 ? "" : "s");
  }
  return out;
}

std::string render_json(const LockState& state) {
  std::string out = "{";
  out += "\"name\":" + json_string(state.name);
  out += ",\"kind\":" + json_string(state.kind);
  out += ",\"key_type\":" + json_string(state.key_type);
  out += ",\"held\":" + std::string(state.held() ? "true" : "false");
  if (!state.problem.empty()) out += ",\"problem\":" + json_string(state.problem);
  if (!state.mode.empty()) out += ",\"mode\":" + json_string(state.mode);
  if (state.counter) {
    out += ",\"available_permits\":" + std::to_string(*state.counter);
    if (state.kind == "counter") out += ",\"latch_count\":" + std::to_string(*state.counter);
  }
  if (state.kind == "pes") {
    out += ",\"permits\":[";
    for (std::size_t i = 0; i < state.permits.size(); ++i) {
      auto& permit = state.permits[i];
      out += i ? ",{" : "{";
      out += "\"id\":" + json_string(permit.id);
      if (permit.expiry_ms) {
        out += ",\"expiry_epoch_ms\":" + std::to_string(*permit.expiry_ms);
        out += ",\"expires_in_ms\":" + std::to_string(permit.expires_in_ms);
      }
      out += "}";
    }
    out += "]";
  }
  out += ",\"pttl_ms\":" + std::to_string(state.pttl);
  out += ",\"holders\":[";
  for (std::size_t i = 0; i < state.holders.size(); ++i) {
    auto& h = state.holders[i];
    out += i ? ",{" : "{";
    out += "\"field\":" + json_string(h.field);
    out += ",\"client_id\":" + json_string(h.client_id);
    out += ",\"thread\":" + json_string(h.thread);
    out += ",\"count\":" + std::to_string(h.count);
    out += ",\"writer\":" + std::string(h.writer ? "true" : "false");
    if (state.kind == "rw" && !h.writer) out += ",\"read_hold_ttls_ms\":" + json_ttls(h.read_hold_ttls);
    if (!h.address.empty()) out += ",\"address\":" + json_string(h.address);
    out += "}";
  }
  out += "],\"queue\":[";
  for (std::size_t i = 0; i < state.queue.size(); ++i) {
    auto& w = state.queue[i];
    out += i ? ",{" : "{";
    out += "\"id\":" + json_string(w.id);
    out += ",\"client_id\":" + json_string(w.client_id);
    out += ",\"thread\":" + json_string(w.thread);
    if (w.deadline_ms) {
      out += ",\"deadline_epoch_ms\":" + std::to_string(*w.deadline_ms);
      out += ",\"deadline_in_ms\":" + std::to_string(w.deadline_in_ms);
    }
    out += ",\"channel\":" + json_string(w.channel);
    out += ",\"subscribers\":" + std::to_string(w.subscribers);
    if (!w.address.empty()) out += ",\"address\":" + json_string(w.address);
    out += "}";
  }
  out += "]";
  if (state.token) out += ",\"token\":" + json_string(*state.token);
  out += ",\"channels\":[";
  for (std::size_t i = 0; i < state.channels.size(); ++i) {
    out += i ? ",{" : "{";
    out += "\"channel\":" + json_string(state.channels[i].first);
    out += ",\"subscribers\":" + std::to_string(state.channels[i].second) + "}";
  }
  out += "]}";
  return out;
}

std::string render_scan_text(const std::vector<LockState>& locks) {
  if (locks.empty()) return "no locks held\n";
  std::size_t width = 4;
  for (auto& lock : locks) width = std::max(width, lock.name.size());
  std::string out = fmt::format("{:<{}}  {:<6}  {:<7}  {}\n", "NAME", width, "KIND", "HOLDERS", "TTL");
  for (auto& lock : locks) {
    std::string kind = lock.kind == "rw" ? "rw/" + lock.mode : lock.kind;
    out +=
        fmt::format("{:<{}}  {:<6}  {:<7}  {}\n", lock.name, width, kind, lock.holders.size(), describe_ttl(lock.pttl));
  }
  return out;
}

std::string render_scan_json(const std::vector<LockState>& locks) {
  std::string out = "[";
  for (std::size_t i = 0; i < locks.size(); ++i) out += (i ? "," : "") + render_json(locks[i]);
  return out + "]";
}

}  // namespace warden::inspect
