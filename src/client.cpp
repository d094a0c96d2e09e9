#include <warden/client.hpp>
#include <warden/error.hpp>

#include "client_core.hpp"
#include "lock_core.hpp"

namespace warden {

Client::Client(Config config) : core_(std::make_shared<detail::ClientCore>(std::move(config))) {}

Client::~Client() {
  try {
    core_->shutdown();
  } catch (...) {
    // A destructor must not throw; shutdown only fails if the thread cannot be joined.
  }
}

const std::string& Client::id() const noexcept { return core_->id(); }

const Config& Client::config() const noexcept { return core_->config(); }

Lock Client::get_lock(std::string_view name) {
  if (name.empty()) {
    throw Error(errc::invalid_argument,
                detail::lock_message(name, core_->node_for(name).server(), "a lock name must not be empty"));
  }
  return Lock(core_->lock_core<detail::LockCore>("lock", name));
}

}  // namespace warden
