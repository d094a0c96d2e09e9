// Reading the state of servers a fixture starts, which they announce by no
// event: INFO fields, and polling until a condition holds.
#pragma once

#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>

namespace warden::test::detail {

// The value of `field` in an INFO-style "field:value" text; empty if absent.
inline std::string info_field(const std::string& text, const std::string& field) {
  std::string key = field + ":";
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find("\r\n", at);
    if (end == std::string::npos) end = text.size();
    if (text.compare(at, key.size(), key) == 0) return text.substr(at + key.size(), end - at - key.size());
    at = end + 2;
  }
  return {};
}

// Polls `problem` (empty: done) until it is empty or `timeout` passes, then
// throws std::runtime_error "<who>: <what>: <the last problem>". A probe that
// throws counts as a problem, not the end of the wait: servers changing role
// close their clients' connections (a sentinel's failover kills them all),
// and the state waited for usually comes right after.
inline void wait_for(const std::function<std::string()>& problem, std::chrono::milliseconds timeout,
                     const std::string& who, const std::string& what) {
  auto look = [&]() -> std::string {
    try {
      return problem();
    } catch (const std::runtime_error& error) {
      return std::string("a probe failed: ") + error.what();
    }
  };
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last;
  while (std::chrono::steady_clock::now() < deadline) {
    last = look();
    if (last.empty()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  last = look();
  if (!last.empty()) throw std::runtime_error(who + ": " + what + ": " + last);
}

}  // namespace warden::test::detail
