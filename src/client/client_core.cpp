#include "client/client_core.hpp"

#include <fmt/format.h>

#include <sys/random.h>

#include <cerrno>
#include <cstdio>
#include <system_error>

#include "io/spare_buckets.hpp"
#include "io/tls_session.hpp"
#include "lock/lock_core.hpp"
#include "topology/cluster.hpp"
#include "topology/sentinel.hpp"
#include "topology/single_server.hpp"

namespace warden::detail {
namespace {

// Reads the TLS files (throwing invalid_argument naming the one that cannot
// be loaded) once for all connections of the Client.
ConnectionOptions connection_options(const Config& config, const std::string& client_id) {
  ConnectionOptions options;
  options.host = config.host;
  options.port = config.port;
  options.unix_socket = config.unix_socket;
  if (config.tls.enabled) {
    options.tls = TlsContext::create(config.tls);
    options.tls_server_name = tls_server_name(config);
  }
  options.username = config.username;
  options.password = config.password;
  options.database = config.database;
  options.connect_timeout = config.connect_timeout;
  options.health_check_interval = config.health_check_interval;
  options.backoff_min = config.retry_backoff_min;
  options.backoff_max = config.retry_backoff_max;
  options.retry_attempts = config.retry_attempts;
  options.client_name = "warden:" + client_id;
  options.log = config.logger;
  options.on_event = config.observer.on_connection;
  options.eviction_guard = config.eviction_guard;
  options.on_eviction = config.observer.on_eviction;
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

// Each observer hook the user set, made safe the same way: what it throws is
// logged and ignored. Hooks left empty stay empty, so an event nobody
// observes costs one test where it arises.
template <class Event>
void guard_hook(std::function<void(const Event&)>& hook, const char* name, const warden::logger& log) {
  if (!hook) return;
  hook = [inner = std::move(hook), name, log](const Event& event) noexcept {
    try {
      inner(event);
    } catch (const std::exception& error) {
      if (log) {
        log(log_level::error, fmt::format("warden: the observer's {} threw, and was ignored: {}", name, error.what()));
      }
    } catch (...) {
      if (log) log(log_level::error, fmt::format("warden: the observer's {} threw, and was ignored", name));
    }
  };
}

Config with_guarded_hooks(Config config) {
  config = with_guarded_logger(std::move(config));
  auto& hooks = config.observer;
  guard_hook(hooks.on_acquire, "on_acquire", config.logger);
  guard_hook(hooks.on_release, "on_release", config.logger);
  guard_hook(hooks.on_renewal, "on_renewal", config.logger);
  guard_hook(hooks.on_hold_lost, "on_hold_lost", config.logger);
  guard_hook(hooks.on_connection, "on_connection", config.logger);
  guard_hook(hooks.on_eviction, "on_eviction", config.logger);
  return config;
}

}  // namespace

namespace {

void fill_random(unsigned char* out, std::size_t size) {
  std::size_t got = 0;
  while (got < size) {
    auto n = getrandom(out + got, size - got, 0);
    if (n > 0) {
      got += static_cast<std::size_t>(n);
    } else if (n < 0 && errno != EINTR) {
      break;
    }
  }
  if (got == size) return;
  // A kernel without getrandom: the same source through its device file.
  std::FILE* device = std::fopen("/dev/urandom", "rb");
  bool ok = device != nullptr && std::fread(out, 1, size, device) == size;
  if (device != nullptr) std::fclose(device);
  if (!ok) throw std::system_error(errno, std::generic_category(), "warden: no random bytes for the client id");
}

}  // namespace

std::string random_uuid() {
  unsigned char bytes[16];
  fill_random(bytes, sizeof bytes);
  bytes[6] = static_cast<unsigned char>((bytes[6] & 0x0f) | 0x40);  // version 4
  bytes[8] = static_cast<unsigned char>((bytes[8] & 0x3f) | 0x80);  // variant 10xx (RFC 4122)
  std::string out;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += fmt::format("{:02x}", bytes[i]);
  }
  return out;
}

namespace {

LockSettings lock_settings(const Config& config) {
  LockSettings settings;
  settings.command_timeout = config.command_timeout;
  settings.retry_attempts = config.retry_attempts;
  settings.retry_backoff_min = config.retry_backoff_min;
  settings.retry_backoff_max = config.retry_backoff_max;
  settings.lock_watchdog_timeout = config.lock_watchdog_timeout;
  settings.lock_watchdog_batch_size = config.lock_watchdog_batch_size;
  settings.fair_lock_wait_timeout = config.fair_lock_wait_timeout;
  return settings;
}

}  // namespace

ClientCore::ClientCore(Config config)
    : LockHost(random_uuid(), lock_settings(config)),
      config_(with_guarded_hooks(std::move(config))),
      holds_(config_.lock_watchdog_timeout),
      watchdog_(*this, holds_) {
  if (!config_.sentinel.sentinels.empty()) {
    auto master = connection_options(config_, id());
    master.tls_server_name = config_.tls.server_name;  // each server's own host unless configured
    auto sentinel = master;
    sentinel.username = config_.sentinel.username;
    sentinel.password = config_.sentinel.password;
    sentinel.database = 0;
    topology_ = std::make_unique<Sentinel>(loop_, std::move(master), std::move(sentinel),
                                           replica_policy(config_.replica_sync, true), config_.sentinel,
                                           config_.command_timeout);
  } else if (config_.cluster.seeds.empty()) {
    topology_ = std::make_unique<SingleServer>(loop_, connection_options(config_, id()),
                                               replica_policy(config_.replica_sync, false));
  } else {
    auto options = connection_options(config_, id());
    // Each node's own host, unless one name was configured for all.
    options.tls_server_name = config_.tls.server_name;
    topology_ = std::make_unique<Cluster>(loop_, std::move(options), replica_policy(config_.replica_sync, true),
                                          config_.cluster, config_.command_timeout);
  }
  // Nothing in flight and no acquire waiting: the I/O thread may stop
  // watching the sockets, and a lone blocking caller waits for its own
  // answer (EventLoop::lead_until).
  loop_.set_idle_probe([this] { return hooks_.empty() && tracked_.empty() && topology_->idle(); });
  loop_.post([this] { topology_->start(); });
}

ClientCore::~ClientCore() { shutdown(); }

void ClientCore::shutdown() {
  if (shut_down_.exchange(true)) return;
  closing_.store(true, std::memory_order_release);
  loop_.stop([this] {
    // Parked acquires first: they would otherwise wait on timers that die with the loop.
    fail_waiters();
    watchdog_.stop();
    topology_->close();
  });
}

void ClientCore::fail_waiters() {
  auto tracked = std::move(tracked_);
  tracked_.clear();
  for (auto& [ticket, fail] : tracked) fail();
  // Woken waiters that park again are failed too rather than left to
  // timers that die with the loop.
  hooks_.fail_all();
}

void ClientCore::run_script_once_publish_known(Command command, std::string_view route_key, clock::time_point deadline,
                                               bool idempotent, reply_handler handler, replica_wait wait) {
  // Only before the first slot table of a cluster that asks the servers;
  // such a script could not leave before that table anyway.
  topology_->when_publish_known(
      deadline, [this, command = std::move(command), route_key = std::string(route_key), deadline, idempotent,
                 handler = std::move(handler), wait](Response&& known) mutable {
        if (known.error) return handler(std::move(known));
        command.replace_argument(publish_stand_in, topology_->publish_command());
        topology_->run_script(std::move(command), route_key, deadline, idempotent, std::move(handler), wait);
      });
}

std::shared_ptr<LockCore> ClientCore::still_alive(LockCore& core) { return core.weak_from_this().lock(); }

void ClientCore::forget_core(const LockCore& core, std::string_view kind) {
  std::lock_guard<std::mutex> guard(locks_mutex_);
  auto found = locks_.find(core_name{kind, core.name()});
  // A newer core of the name may have taken the entry already.
  if (found != locks_.end() && found->second == &core) {
    locks_.erase(found);
    release_spare_buckets(locks_);
  }
}

std::uint64_t ClientCore::track(std::function<void()> fail_with_shutdown) {
  auto ticket = next_ticket_++;
  tracked_.emplace(ticket, std::move(fail_with_shutdown));
  return ticket;
}

void ClientCore::untrack(std::uint64_t ticket) {
  // Every parked waiter is tracked: a crowd of them must not leave its
  // buckets behind.
  if (tracked_.erase(ticket) != 0) release_spare_buckets(tracked_);
}

}  // namespace warden::detail
