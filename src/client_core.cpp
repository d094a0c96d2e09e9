#include "client_core.hpp"

#include <fmt/format.h>

#include <random>

#include "lock_core.hpp"

namespace warden::detail {
namespace {

std::string make_uuid() {
  std::random_device device;
  std::mt19937_64 random((static_cast<std::uint64_t>(device()) << 32) ^ device());
  std::uint64_t high = random();
  std::uint64_t low = random();
  high = (high & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // version 4
  low = (low & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;    // RFC 4122 variant
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", high >> 32, (high >> 16) & 0xffff, high & 0xffff,
                     low >> 48, low & 0xffffffffffffULL);
}

ConnectionOptions connection_options(const Config& config, const std::string& id) {
  ConnectionOptions options;
  options.host = config.host;
  options.port = config.port;
  options.username = config.username;
  options.password = config.password;
  options.database = config.database;
  options.connect_timeout = config.connect_timeout;
  options.health_check_interval = config.health_check_interval;
  options.backoff_min = config.retry_backoff_min;
  options.backoff_max = config.retry_backoff_max;
  options.retry_attempts = config.retry_attempts;
  options.health_channel = "warden:health:" + id;
  options.log = config.logger;
  return options;
}

// The user's logger, made safe to call from anywhere: what it throws is
// swallowed (there is nowhere left to report it).
Config with_guarded_logger(Config config) {
  if (config.logger) {
    config.logger = [inner = std::move(config.logger)](log_level level, std::string_view message) noexcept {
      try {
        inner(level, message);
      } catch (...) {
      }
    };
  }
  return config;
}

}  // namespace

std::string lock_message(std::string_view lock, std::string_view server, std::string_view what) {
  return fmt::format("warden: lock '{}' on {}: {}", lock, server, what);
}

ClientCore::ClientCore(Config config) : config_(with_guarded_logger(std::move(config))), id_(make_uuid()), watchdog_(*this) {
  node_ = std::make_unique<Node>(loop_, connection_options(config_, id_));
  loop_.post([this] { node_->start(); });
}

ClientCore::~ClientCore() { shutdown(); }

void ClientCore::shutdown() {
  if (shut_down_.exchange(true)) return;
  loop_.stop([this] {
    // Parked acquires first: they would otherwise wait on timers that die with the loop.
    auto tracked = std::move(tracked_);
    tracked_.clear();
    for (auto& [ticket, fail] : tracked) fail();
    watchdog_.stop();
    node_->close();
  });
}

Node& ClientCore::node_for(std::string_view /*key*/) { return *node_; }

void ClientCore::prune_locks() {
  // Drop entries of locks nobody refers to any more, now and then.
  if (locks_.size() > 64 && locks_.size() % 64 == 0) {
    for (auto it = locks_.begin(); it != locks_.end();) {
      it = it->second.expired() ? locks_.erase(it) : std::next(it);
    }
  }
}

std::uint64_t ClientCore::track(std::function<void()> fail_with_shutdown) {
  auto ticket = next_ticket_++;
  tracked_.emplace(ticket, std::move(fail_with_shutdown));
  return ticket;
}

void ClientCore::untrack(std::uint64_t ticket) { tracked_.erase(ticket); }

}  // namespace warden::detail
