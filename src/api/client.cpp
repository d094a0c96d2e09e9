#include <warden/client.hpp>
#include <warden/error.hpp>

#include <fmt/format.h>

#include <future>
#include <utility>

#include "api/access.hpp"
#include "client/client_core.hpp"
#include "lock/count_down_latch_core.hpp"
#include "lock/fair_lock_core.hpp"
#include "lock/fenced_lock_core.hpp"
#include "lock/keys.hpp"
#include "lock/lock_core.hpp"
#include "lock/permit_keeper.hpp"
#include "lock/permit_semaphore_core.hpp"
#include "lock/read_write_lock_core.hpp"
#include "lock/semaphore_core.hpp"
#include "lock/semaphore_keys.hpp"
#include "lock/spin_delays.hpp"
#include "lock/spin_lock_core.hpp"

namespace warden {

namespace {

Config validated(Config config) {
  config.validate();
  return config;
}

}  // namespace

Client::Client(Config config) : core_(std::make_shared<detail::ClientCore>(validated(std::move(config)))) {}

Client::~Client() {
  try {
    core_->shutdown();
  } catch (...) {
    // A destructor must not throw; shutdown only fails if the thread cannot be joined.
  }
}

namespace {

using std::chrono::milliseconds;

// A caller's timeout as a deadline. Capped at a year: timers need a time
// they can represent, and nobody waits longer.
detail::clock::time_point deadline_after(milliseconds timeout) {
  constexpr milliseconds cap = std::chrono::hours(24 * 365);
  return detail::clock::now() + std::min(timeout, cap);
}

void check_wait(detail::ClientCore& core, milliseconds timeout, std::string_view call) {
  if (timeout.count() < 0) {
    throw Error(errc::invalid_argument,
                fmt::format("warden: {}: {}: the timeout must not be negative", core.topology().label(), call));
  }
  if (core.loop().in_loop_thread()) {
    throw Error(errc::would_deadlock,
                fmt::format("warden: {}: {} blocks, and was called on the client's I/O thread (inside a callback)",
                            core.topology().label(), call));
  }
}

}  // namespace

void Client::wait_until_connected_ms(milliseconds timeout) {
  check_wait(*core_, timeout, "wait_until_connected()");
  auto start = detail::clock::now();
  auto deadline = deadline_after(timeout);
  using answer = std::pair<std::error_code, std::string>;
  auto promise = std::make_shared<std::promise<answer>>();
  auto future = promise->get_future();
  // No CallerWaits: the answer may take the whole timeout, and the loop
  // thread runs the reconnects meanwhile.
  bool queued = core_->post_operation([core = core_, deadline, promise] {
    core->probe(deadline, [promise](std::error_code error, const std::string& why) {
      promise->set_value(answer{error, why});
    });
  });
  if (!queued) {
    throw Error(errc::shut_down, fmt::format("warden: {}: the client is shut down", core_->topology().label()));
  }
  // The probe answers by its deadline, or when a shutdown fails it.
  auto [error, why] = future.get();
  if (!error) return;
  auto waited = std::chrono::duration_cast<milliseconds>(detail::clock::now() - start);
  throw Error(error, fmt::format("warden: {}: not connected after {} ms (timeout {} ms): {}", core_->topology().label(),
                                 waited.count(), timeout.count(), why));
}

bool Client::close() { return close_ms(core_->config().command_timeout); }

bool Client::close_ms(milliseconds timeout) {
  check_wait(*core_, timeout, "close()");
  auto deadline = deadline_after(timeout);
  auto promise = std::make_shared<std::promise<bool>>();
  auto future = promise->get_future();
  // Another close() began first (or ended): it shuts the client down.
  if (!core_->release_all([promise](bool all) { promise->set_value(all); })) return true;
  bool all = future.wait_until(deadline) == std::future_status::ready && future.get();
  core_->shutdown();
  return all;
}

const std::string& Client::id() const noexcept { return core_->id(); }

const Config& Client::config() const noexcept { return core_->client_config(); }

namespace {

void check_name(detail::ClientCore& core, std::string_view name) {
  if (name.empty()) {
    throw Error(errc::invalid_argument,
                detail::lock_message(name, core.topology().describe(name), "a lock name must not be empty"));
  }
  if (auto problem = detail::keys::name_problem(name)) {
    throw Error(errc::invalid_argument, detail::lock_message(name, core.topology().describe(name), *problem));
  }
}

}  // namespace

Lock Client::get_lock(std::string_view name) {
  check_name(*core_, name);
  return detail::access::make<Lock>(core_->lock_core<detail::LockCore>("lock", name));
}

FairLock Client::get_fair_lock(std::string_view name) {
  check_name(*core_, name);
  return detail::access::make<FairLock>(core_->lock_core<detail::FairLockCore>("fair", name));
}

FencedLock Client::get_fenced_lock(std::string_view name) {
  check_name(*core_, name);
  return detail::access::make<FencedLock>(core_->lock_core<detail::FencedLockCore>("fenced", name));
}

SpinLock Client::get_spin_lock(std::string_view name, SpinBackoff backoff) {
  check_name(*core_, name);
  if (auto problem = detail::spin_backoff_problem(backoff)) {
    throw Error(errc::invalid_argument, detail::lock_message(name, core_->topology().describe(name), *problem));
  }
  // One core per back-off: the core's waiters use it.
  auto kind = fmt::format("spin {} {} {} {}", backoff.initial_delay.count(), backoff.max_delay.count(),
                          backoff.multiplier, backoff.jitter.count());
  return detail::access::make<SpinLock>(core_->lock_core<detail::SpinLockCore>(kind, name, backoff));
}

Lock Client::get_non_reentrant_lock(std::string_view name) {
  check_name(*core_, name);
  return detail::access::make<Lock>(core_->lock_core<detail::LockCore>("lock non-reentrant", name, false));
}

FairLock Client::get_non_reentrant_fair_lock(std::string_view name) {
  check_name(*core_, name);
  return detail::access::make<FairLock>(core_->lock_core<detail::FairLockCore>("fair non-reentrant", name, false));
}

ReadWriteLock Client::get_read_write_lock(std::string_view name) {
  check_name(*core_, name);
  return ReadWriteLock(detail::access::make<Lock>(core_->lock_core<detail::ReadLockCore>("read", name)),
                       detail::access::make<Lock>(core_->lock_core<detail::WriteLockCore>("write", name)));
}

CountDownLatch Client::get_count_down_latch(std::string_view name) {
  if (name.empty()) {
    throw Error(errc::invalid_argument,
                fmt::format("warden: {}: a count-down latch needs a name", core_->topology().label()));
  }
  return detail::access::make<CountDownLatch>(std::make_shared<detail::CountDownLatchCore>(core_, std::string(name)));
}

Semaphore Client::get_semaphore(std::string_view name) {
  auto refuse = [&](const std::string& problem) {
    throw Error(errc::invalid_argument,
                fmt::format("warden: semaphore '{}' on {}: {}", name, core_->topology().describe(name), problem));
  };
  if (name.empty()) refuse("a semaphore name must not be empty");
  if (auto problem = detail::keys::semaphore_name_problem(name)) refuse(*problem);
  return detail::access::make<Semaphore>(std::make_shared<detail::SemaphoreCore>(core_, std::string(name)));
}

PermitExpirableSemaphore Client::get_permit_expirable_semaphore(std::string_view name) {
  auto refuse = [&](const std::string& problem) {
    throw Error(errc::invalid_argument, fmt::format("warden: permit-expirable semaphore '{}' on {}: {}", name,
                                                    core_->topology().describe(name), problem));
  };
  if (name.empty()) refuse("a semaphore name must not be empty");
  if (auto problem = detail::keys::semaphore_name_problem(name)) refuse(*problem);
  // The watchdog's side of the semaphore is shared by its handles in this
  // client, so that any of them releases (and hears of the loss of) a
  // permit another acquired.
  auto keeper = core_->lock_core<detail::PermitKeeper>("permit_keeper", detail::keys::suffixed(name, "timeout"),
                                                       std::string(name));
  return detail::access::make<PermitExpirableSemaphore>(
      std::make_shared<detail::PermitSemaphoreCore>(core_, std::string(name), std::move(keeper)));
}

}  // namespace warden
