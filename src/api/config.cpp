// Parsing of redis:// URLs into a Config.
#include <warden/config.hpp>
#include <warden/error.hpp>

#include <charconv>
#include <string>

#include <fmt/format.h>

#include "lock/limits.hpp"

namespace warden {
namespace {

// The URL with the password part of its userinfo replaced, so that no error
// message or log line ever carries a secret.
std::string redacted(std::string_view url) {
  constexpr std::string_view scheme = "redis://";
  auto start = url.substr(0, scheme.size()) == scheme ? scheme.size() : 0;
  auto at = url.rfind('@');
  if (at == std::string_view::npos || at < start) return std::string(url);
  std::string_view userinfo = url.substr(start, at - start);
  std::string out(url.substr(0, start));
  if (auto colon = userinfo.find(':'); colon != std::string_view::npos) {
    out += userinfo.substr(0, colon);
    out += ":***";
  } else {
    out += "***";  // a bare userinfo is the password
  }
  out += url.substr(at);
  return out;
}

[[noreturn]] void bad_url(std::string_view url, std::string_view why) {
  throw Error(errc::invalid_argument, "warden: invalid Redis URL '" + redacted(url) + "': " + std::string(why));
}

[[noreturn]] void bad_field(std::string_view field, std::string_view why) {
  throw Error(errc::invalid_argument, fmt::format("warden: invalid Config::{}: {}", field, why));
}

void check_range(std::string_view field, std::chrono::milliseconds value, std::chrono::milliseconds min,
                 std::chrono::milliseconds max) {
  if (value < min || value > max) {
    bad_field(field, fmt::format("{} ms is outside [{} ms, {} ms]", value.count(), min.count(), max.count()));
  }
}

template <class Int>
Int parse_number(std::string_view url, std::string_view text, std::string_view what, Int min, Int max) {
  long long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || value < min || value > max) {
    // The text is named only for the port and database, never for userinfo.
    bad_url(url, std::string(what) + " '" + std::string(text) + "' is not a number in range");
  }
  return static_cast<Int>(value);
}

// "%xx" escapes let passwords carry ':' and '@'.
std::string percent_decode(std::string_view url, std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) bad_url(url, "truncated %-escape");
    unsigned value = 0;
    auto [end, ec] = std::from_chars(text.data() + i + 1, text.data() + i + 3, value, 16);
    if (ec != std::errc{} || end != text.data() + i + 3) bad_url(url, "bad %-escape");
    out += static_cast<char>(value);
    i += 2;
  }
  return out;
}

}  // namespace

void Config::validate() const {
  using std::chrono::milliseconds;
  constexpr milliseconds day = std::chrono::hours(24);
  if (port == 0) bad_field("port", "port 0 is not a server port");
  if (database < 0) bad_field("database", fmt::format("{} is negative", database));
  // Renewal runs every third of the lease, so it needs at least 3 ms; past
  // ten years Redis or the clocks would overflow (detail::max_lease).
  check_range("lock_watchdog_timeout", lock_watchdog_timeout, milliseconds{3}, detail::max_lease);
  check_range("fair_lock_wait_timeout", fair_lock_wait_timeout, milliseconds{3}, detail::max_lease);
  check_range("connect_timeout", connect_timeout, milliseconds{1}, day);
  check_range("command_timeout", command_timeout, milliseconds{1}, day);
  check_range("health_check_interval", health_check_interval, milliseconds{1}, day);
  check_range("retry_backoff_min", retry_backoff_min, milliseconds{0}, day);
  check_range("retry_backoff_max", retry_backoff_max, milliseconds{0}, day);
  if (retry_backoff_min > retry_backoff_max) {
    bad_field("retry_backoff_min", fmt::format("{} ms is above retry_backoff_max ({} ms)", retry_backoff_min.count(),
                                               retry_backoff_max.count()));
  }
  if (retry_attempts < 0 || retry_attempts > 1000) {
    bad_field("retry_attempts", fmt::format("{} is outside [0, 1000]", retry_attempts));
  }
}

Config Config::from_url(std::string_view url) {
  Config config;
  constexpr std::string_view scheme = "redis://";
  if (url.substr(0, scheme.size()) != scheme) bad_url(url, "it must start with redis://");
  std::string_view rest = url.substr(scheme.size());

  if (auto slash = rest.find('/'); slash != std::string_view::npos) {
    std::string_view db = rest.substr(slash + 1);
    if (!db.empty()) config.database = parse_number<int>(url, db, "database", 0, 1 << 20);
    rest = rest.substr(0, slash);
  }
  if (auto at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view userinfo = rest.substr(0, at);
    rest = rest.substr(at + 1);
    if (auto colon = userinfo.find(':'); colon != std::string_view::npos) {
      config.username = percent_decode(url, userinfo.substr(0, colon));
      config.password = percent_decode(url, userinfo.substr(colon + 1));
    } else {
      // "redis://secret@host": a bare userinfo is the password, as redis-cli reads it.
      config.password = percent_decode(url, userinfo);
    }
  }
  std::string_view host = rest;
  const bool bracketed = !rest.empty() && rest.front() == '[';
  if (bracketed) {  // [IPv6]:port
    auto close = rest.find(']');
    if (close == std::string_view::npos) bad_url(url, "unclosed '['");
    host = rest.substr(1, close - 1);
    rest = rest.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') bad_url(url, "junk after ']'");
      config.port = parse_number<std::uint16_t>(url, rest.substr(1), "port", 1, 65535);
    }
  } else if (auto colon = rest.rfind(':'); colon != std::string_view::npos) {
    host = rest.substr(0, colon);
    config.port = parse_number<std::uint16_t>(url, rest.substr(colon + 1), "port", 1, 65535);
  }
  if (host.empty()) bad_url(url, "no host");
  if (host.find(':') != std::string_view::npos && !bracketed) bad_url(url, "an IPv6 address must be in brackets");
  config.host = std::string(host);
  return config;
}

}  // namespace warden
