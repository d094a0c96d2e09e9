#include <warden/client.hpp>
#include <warden/error.hpp>

#include <fmt/format.h>

#include "api/access.hpp"
#include "topology/client_core.hpp"
#include "lock/fair_lock_core.hpp"
#include "lock/fenced_lock_core.hpp"
#include "lock/keys.hpp"
#include "lock/lock_core.hpp"
#include "lock/read_write_lock_core.hpp"
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

const std::string& Client::id() const noexcept { return core_->id(); }

const Config& Client::config() const noexcept { return core_->config(); }

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

}  // namespace warden
