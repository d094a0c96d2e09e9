// Config::validate and the parsing of redis://, rediss:// and unix:// URLs into a Config.
#include <warden/config.hpp>
#include <warden/error.hpp>

#include <cctype>
#include <charconv>
#include <string>

#include <fmt/format.h>

#include "base/limits.hpp"

namespace warden {
namespace {

// The URL schemes from_url accepts and what each one means.
enum class url_topology { single, cluster, sentinel };
struct url_scheme {
  std::string_view prefix;
  bool tls;
  bool unix_socket;
  url_topology topology;
};
constexpr url_scheme url_schemes[] = {
    {"redis://", false, false, url_topology::single},
    {"rediss://", true, false, url_topology::single},
    {"unix://", false, true, url_topology::single},
    {"redis+unix://", false, true, url_topology::single},
    {"redis+cluster://", false, false, url_topology::cluster},
    {"rediss+cluster://", true, false, url_topology::cluster},
    {"redis+sentinel://", false, false, url_topology::sentinel},
    {"rediss+sentinel://", true, false, url_topology::sentinel},
};

// Schemes are case-insensitive (RFC 3986, 3.1): "REDIS://" is "redis://".
bool starts_with_ignoring_case(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
  }
  return true;
}

const url_scheme* find_scheme(std::string_view url) {
  for (const auto& scheme : url_schemes) {
    if (starts_with_ignoring_case(url, scheme.prefix)) return &scheme;
  }
  return nullptr;
}

// Why `host` cannot name a server, or empty when it can. A byte that no host
// name or address holds (a NUL, a space, a URL delimiter) would otherwise be
// cut off or skipped by the resolver: "127.0.0.1\0evil" must not reach
// 127.0.0.1. Only the offending character is named, never the host itself,
// which may hold a NUL or a control character.
std::string host_problem(std::string_view host) {
  for (char c : host) {
    auto byte = static_cast<unsigned char>(c);
    if (byte == 0) return "the host contains a NUL byte";
    if (byte == ' ') return "the host contains a space";
    if (byte < 0x20 || byte == 0x7f) return fmt::format("the host contains the control character 0x{:02x}", byte);
    if (std::string_view("#?/\\@[],").find(c) != std::string_view::npos) {
      return fmt::format("the host contains '{}', which no host name or address has", c);
    }
  }
  return {};
}

// Where the userinfo of a socket URL ends: the '@' that starts the path. A
// path may itself hold '@', so "@/" is looked for first; failing that the last
// '@' before any query still ends a (malformed) userinfo, so that it is masked.
std::string_view::size_type unix_userinfo_end(std::string_view rest) {
  if (rest.empty() || rest.front() == '/') return std::string_view::npos;
  if (auto at = rest.find("@/"); at != std::string_view::npos) return at;
  return rest.substr(0, rest.find('?')).rfind('@');
}

// The URL with the password part of its userinfo (and any "password=" query
// value) replaced, so that no error message or log line ever carries a secret.
std::string redacted(std::string_view url) {
  std::string_view::size_type start = 0;
  std::string_view::size_type at = std::string_view::npos;
  if (const url_scheme* scheme = find_scheme(url); scheme != nullptr && scheme->unix_socket) {
    start = scheme->prefix.size();
    if (auto end = unix_userinfo_end(url.substr(start)); end != std::string_view::npos) at = start + end;
  } else {
    // Unknown schemes are masked as if they were redis://, so that a typo in
    // the scheme does not reveal the password.
    if (auto separator = url.find("://"); separator != std::string_view::npos) start = separator + 3;
    at = url.rfind('@');
    if (at != std::string_view::npos && at < start) at = std::string_view::npos;
  }
  std::string out;
  if (at == std::string_view::npos) {
    out = std::string(url);
  } else {
    std::string_view userinfo = url.substr(start, at - start);
    out = std::string(url.substr(0, start));
    if (auto colon = userinfo.find(':'); colon != std::string_view::npos) {
      out += userinfo.substr(0, colon);
      out += ":***";
    } else {
      out += "***";  // a bare userinfo is the password
    }
    out += url.substr(at);
  }
  if (auto query = out.find('?'); query != std::string::npos) {
    constexpr std::string_view key = "password=";
    for (auto pos = out.find(key, query); pos != std::string::npos; pos = out.find(key, pos + 1)) {
      if (out[pos - 1] != '?' && out[pos - 1] != '&') continue;
      auto value = pos + key.size();
      auto end = out.find('&', value);
      out.replace(value, (end == std::string::npos ? out.size() : end) - value, "***");
    }
  }
  return out;
}

// `text` with its control characters written as \xNN: a message must show a
// NUL inside a URL rather than end there.
std::string printable(std::string_view text) {
  std::string out;
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out += c;
    }
  }
  return out;
}

[[noreturn]] void bad_url(std::string_view url, std::string_view why) {
  throw Error(errc::invalid_argument,
              "warden: invalid Redis URL '" + printable(redacted(url)) + "': " + std::string(why));
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

void check_endpoints(std::string_view field, const std::vector<endpoint>& list) {
  for (std::size_t i = 0; i < list.size(); ++i) {
    auto name = fmt::format("{}[{}]", field, i);
    if (list[i].host.empty()) bad_field(name, "the host is empty");
    if (auto problem = host_problem(list[i].host); !problem.empty()) bad_field(name, problem);
    if (list[i].port == 0) bad_field(name, fmt::format("{}: port 0 is not a server port", list[i].host));
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

// Why `path` cannot name a unix socket, or empty when it can.
std::string unix_path_problem(std::string_view path) {
  // sockaddr_un::sun_path is 108 bytes on Linux, one of them the NUL.
  constexpr std::size_t max_path = 107;
  if (path.front() != '/') return fmt::format("'{}' is not an absolute path", path);
  if (path.find('\0') != std::string_view::npos) return "the path contains a NUL byte";
  if (path.size() > max_path) {
    return fmt::format("the path is {} bytes long; a unix socket path has at most {}", path.size(), max_path);
  }
  return {};
}

void parse_userinfo(std::string_view url, std::string_view userinfo, Config& config) {
  if (auto colon = userinfo.find(':'); colon != std::string_view::npos) {
    config.username = percent_decode(url, userinfo.substr(0, colon));
    config.password = percent_decode(url, userinfo.substr(colon + 1));
  } else {
    // "redis://secret@host": a bare userinfo is the password, as redis-cli reads it.
    config.password = percent_decode(url, userinfo);
  }
}

// "host[:port]" or "[v6]:port" of a redis:// URL; the port defaults to `port`.
std::pair<std::string, std::uint16_t> parse_host_port(std::string_view url, std::string_view rest, std::uint16_t port);

// "[[user]:password@]/path[?db=N]", what follows unix:// or redis+unix://.
void parse_unix_url(std::string_view url, std::string_view rest, Config& config) {
  if (auto at = unix_userinfo_end(rest); at != std::string_view::npos) {
    parse_userinfo(url, rest.substr(0, at), config);
    rest = rest.substr(at + 1);
  }
  std::string_view query;
  if (auto question = rest.find('?'); question != std::string_view::npos) {
    query = rest.substr(question + 1);
    rest = rest.substr(0, question);
  }
  if (rest.empty()) bad_url(url, "no socket path (unix:///path/to/redis.sock)");
  if (rest.front() != '/') bad_url(url, "the socket path must be absolute (unix:///path/to/redis.sock)");
  std::string path = percent_decode(url, rest);
  if (auto problem = unix_path_problem(path); !problem.empty()) bad_url(url, problem);
  config.unix_socket = std::move(path);
  while (!query.empty()) {
    auto amp = query.find('&');
    std::string_view parameter = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    auto equals = parameter.find('=');
    std::string_view key = parameter.substr(0, equals);
    std::string_view value = equals == std::string_view::npos ? std::string_view{} : parameter.substr(equals + 1);
    if (key == "db") {
      config.database = parse_number<int>(url, value, "database", 0, 1 << 20);
    } else {
      // Only the key is named: a value could be a secret.
      bad_url(url, "unknown parameter '" + std::string(key) + "' (only db=N is understood)");
    }
  }
}

}  // namespace

void Config::validate() const {
  using std::chrono::milliseconds;
  constexpr milliseconds day = std::chrono::hours(24);
  if (port == 0) bad_field("port", "port 0 is not a server port");
  if (auto problem = host_problem(host); !problem.empty()) bad_field("host", problem);
  if (database < 0) bad_field("database", fmt::format("{} is negative", database));
  // Renewal runs every third of the lease, so it needs at least 3 ms; past
  // ten years Redis or the clocks would overflow (detail::max_lease).
  check_range("lock_watchdog_timeout", lock_watchdog_timeout, milliseconds{3}, detail::max_lease);
  if (lock_watchdog_batch_size < 1 || lock_watchdog_batch_size > 10'000) {
    bad_field("lock_watchdog_batch_size", fmt::format("{} is outside [1, 10000]", lock_watchdog_batch_size));
  }
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
  if (!unix_socket.empty()) {
    if (auto problem = unix_path_problem(unix_socket); !problem.empty()) bad_field("unix_socket", problem);
  }
  check_endpoints("cluster.seeds", cluster.seeds);
  check_endpoints("sentinel.sentinels", sentinel.sentinels);
  if (!cluster.seeds.empty()) {
    if (database != 0) {
      bad_field("database", fmt::format("{}: a cluster has only database 0 (SELECT is refused there)", database));
    }
    if (!unix_socket.empty()) {
      bad_field("unix_socket", "a cluster's nodes are reached at the addresses it announces, not over a unix socket");
    }
  }
  check_range("cluster.refresh_interval", cluster.refresh_interval, milliseconds{10}, day);
  if (!sentinel.sentinels.empty()) {
    if (sentinel.master_name.empty()) bad_field("sentinel.master_name", "empty: which master do the sentinels watch?");
    if (!cluster.seeds.empty()) bad_field("sentinel.sentinels", "set together with cluster.seeds: pick one topology");
    if (!unix_socket.empty()) {
      bad_field("unix_socket", "a master found through Sentinel is reached at the address the sentinels give");
    }
  }
  check_range("sentinel.poll_interval", sentinel.poll_interval, milliseconds{10}, day);
  if (cluster.max_redirects < 1 || cluster.max_redirects > 100) {
    bad_field("cluster.max_redirects", fmt::format("{} is outside [1, 100]", cluster.max_redirects));
  }
  if (cluster.pubsub != sharded_pubsub::automatic && cluster.pubsub != sharded_pubsub::on &&
      cluster.pubsub != sharded_pubsub::off) {
    bad_field("cluster.pubsub", fmt::format("{} is not a sharded_pubsub", static_cast<int>(cluster.pubsub)));
  }
  switch (replica_sync.mode) {
    case replica_sync_mode::automatic:
    case replica_sync_mode::off:
    case replica_sync_mode::at_least_one:
    case replica_sync_mode::all_known:
    case replica_sync_mode::count:
      break;
    default:
      bad_field("replica_sync.mode", fmt::format("{} is not a replica_sync_mode", static_cast<int>(replica_sync.mode)));
  }
  if (eviction_guard != eviction_guard_mode::warn && eviction_guard != eviction_guard_mode::refuse &&
      eviction_guard != eviction_guard_mode::off) {
    bad_field("eviction_guard", fmt::format("{} is not an eviction_guard_mode", static_cast<int>(eviction_guard)));
  }
  if (replica_sync.mode == replica_sync_mode::count && (replica_sync.replicas < 1 || replica_sync.replicas > 1000)) {
    bad_field("replica_sync.replicas", fmt::format("{} is outside [1, 1000]", replica_sync.replicas));
  }
  check_range("replica_sync.timeout", replica_sync.timeout, milliseconds{1}, day);
  // The files themselves are loaded by the Client (detail::TlsContext::create),
  // which reports those that cannot be read.
  if (!tls.cert_file.empty() && tls.key_file.empty()) {
    bad_field("tls.cert_file", "a client certificate needs its private key in tls.key_file, which is empty");
  }
  if (tls.cert_file.empty() && !tls.key_file.empty()) {
    bad_field("tls.key_file", "a private key needs its client certificate in tls.cert_file, which is empty");
  }
  if (tls.min_version != tls_version::tls1_2 && tls.min_version != tls_version::tls1_3) {
    bad_field("tls.min_version", fmt::format("{} is not a tls_version", static_cast<int>(tls.min_version)));
  }
}

Config Config::from_url(std::string_view url) {
  Config config;
  const url_scheme* scheme = find_scheme(url);
  if (scheme == nullptr) {
    bad_url(url,
            "it must start with redis://, rediss://, unix://, redis+unix://, redis+cluster://, "
            "rediss+cluster://, redis+sentinel:// or rediss+sentinel://");
  }
  std::string_view rest = url.substr(scheme->prefix.size());
  config.tls.enabled = scheme->tls;
  if (scheme->unix_socket) {
    parse_unix_url(url, rest, config);
    return config;
  }

  if (scheme->topology == url_topology::sentinel) {
    // .../mastername[/db]
    auto slash = rest.find('/');
    if (slash == std::string_view::npos || slash + 1 == rest.size()) {
      bad_url(url, "no master name (redis+sentinel://host:26379/mastername)");
    }
    std::string_view path = rest.substr(slash + 1);
    rest = rest.substr(0, slash);
    auto db_slash = path.find('/');
    config.sentinel.master_name = percent_decode(url, path.substr(0, db_slash));
    if (config.sentinel.master_name.empty()) bad_url(url, "no master name (redis+sentinel://host:26379/mastername)");
    if (db_slash != std::string_view::npos && db_slash + 1 < path.size()) {
      config.database = parse_number<int>(url, path.substr(db_slash + 1), "database", 0, 1 << 20);
    }
  }
  if (auto slash = rest.find('/'); slash != std::string_view::npos) {
    std::string_view db = rest.substr(slash + 1);
    if (scheme->topology == url_topology::cluster && !db.empty()) {
      bad_url(url, "a cluster has only database 0; nothing may follow the '/'");
    }
    if (!db.empty()) config.database = parse_number<int>(url, db, "database", 0, 1 << 20);
    rest = rest.substr(0, slash);
  }
  if (auto at = rest.rfind('@'); at != std::string_view::npos) {
    parse_userinfo(url, rest.substr(0, at), config);
    rest = rest.substr(at + 1);
  }
  if (scheme->topology != url_topology::single) {
    // host1:port1,host2:port2,...: each as the host part of a redis:// URL.
    const bool sentinels = scheme->topology == url_topology::sentinel;
    auto& list = sentinels ? config.sentinel.sentinels : config.cluster.seeds;
    while (true) {
      auto comma = rest.find(',');
      auto node = parse_host_port(url, rest.substr(0, comma), sentinels ? 26379 : 6379);
      list.push_back(endpoint{std::move(node.first), node.second});
      if (comma == std::string_view::npos) break;
      rest = rest.substr(comma + 1);
    }
    return config;
  }
  auto [host, port] = parse_host_port(url, rest, 6379);
  config.host = std::move(host);
  config.port = port;
  return config;
}

namespace {

std::pair<std::string, std::uint16_t> parse_host_port(std::string_view url, std::string_view rest, std::uint16_t port) {
  std::string_view host = rest;
  const bool bracketed = !rest.empty() && rest.front() == '[';
  if (bracketed) {  // [IPv6]:port
    auto close = rest.find(']');
    if (close == std::string_view::npos) bad_url(url, "unclosed '['");
    host = rest.substr(1, close - 1);
    rest = rest.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') bad_url(url, "junk after ']'");
      port = parse_number<std::uint16_t>(url, rest.substr(1), "port", 1, 65535);
    }
  } else if (auto colon = rest.rfind(':'); colon != std::string_view::npos) {
    host = rest.substr(0, colon);
    port = parse_number<std::uint16_t>(url, rest.substr(colon + 1), "port", 1, 65535);
  }
  if (host.empty()) bad_url(url, "no host");
  if (auto problem = host_problem(host); !problem.empty()) bad_url(url, problem);
  if (host.find(':') != std::string_view::npos && !bracketed) bad_url(url, "an IPv6 address must be in brackets");
  return {std::string(host), port};
}

}  // namespace

}  // namespace warden
