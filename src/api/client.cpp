#include <warden/client.hpp>
#include <warden/error.hpp>

#include "api/access.hpp"
#include "topology/client_core.hpp"
#include "lock/fair_lock_core.hpp"
#include "lock/keys.hpp"
#include "lock/lock_core.hpp"
#include "lock/read_write_lock_core.hpp"

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
                detail::lock_message(name, core.node_for(name).server(), "a lock name must not be empty"));
  }
  if (auto problem = detail::keys::name_problem(name)) {
    throw Error(errc::invalid_argument, detail::lock_message(name, core.node_for(name).server(), *problem));
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

ReadWriteLock Client::get_read_write_lock(std::string_view name) {
  check_name(*core_, name);
  return ReadWriteLock(detail::access::make<Lock>(core_->lock_core<detail::ReadLockCore>("read", name)),
                       detail::access::make<Lock>(core_->lock_core<detail::WriteLockCore>("write", name)));
}

}  // namespace warden
