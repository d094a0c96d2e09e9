#include "lock/fair_lock_core.hpp"

#include "lock/keys.hpp"
#include "lock/lock_host.hpp"
#include "warden_scripts.hpp"

namespace warden::detail {
namespace {

constexpr const char* wake_message = "0";

}  // namespace

FairLockCore::FairLockCore(std::shared_ptr<LockHost> client, std::string name, bool reentrant)
    : LockCore(std::move(client), std::move(name), reentrant),
      queue_(keys::fair_queue(this->name())),
      timeouts_(keys::fair_timeouts(this->name())) {}

std::string FairLockCore::wait_timeout() const {
  return std::to_string(client().config().fair_lock_wait_timeout.count());
}

ScriptCall FairLockCore::acquire(thread_id owner, milliseconds lease, bool join_queue) const {
  return {&scripts::fair_acquire,
          {name_key(), channel_key(), queue_, timeouts_},
          {std::to_string(lease.count()), client().owner(owner), publish_command(), wake_message, wait_timeout(),
           join_queue ? "1" : "0", reentrant() ? "1" : "0"}};
}

ScriptCall FairLockCore::acquire_call(thread_id owner, milliseconds lease) const { return acquire(owner, lease, true); }

ScriptCall FairLockCore::try_acquire_call(thread_id owner, milliseconds lease) const {
  return acquire(owner, lease, false);
}

std::string FairLockCore::wait_channel(thread_id owner) const { return channel_key() + ":" + client().owner(owner); }

std::optional<ScriptCall> FairLockCore::give_up_call(thread_id owner) const {
  return ScriptCall{&scripts::fair_give_up,
                    {name_key(), channel_key(), queue_, timeouts_},
                    {"", client().owner(owner), publish_command(), wake_message, wait_timeout()}};
}

ScriptCall FairLockCore::release_call(thread_id owner, milliseconds keep_lease, const std::string& request_id,
                                      milliseconds latch_ttl) const {
  return {&scripts::fair_release,
          {name_key(), channel_key(), queue_, timeouts_, keys::unlock_latch(name(), request_id)},
          {std::to_string(keep_lease.count()), client().owner(owner), publish_command(), wake_message,
           std::to_string(latch_ttl.count())}};
}

ScriptCall FairLockCore::force_release_call() const {
  return {&scripts::fair_force_release,
          {name_key(), channel_key(), queue_, timeouts_},
          {"", "", publish_command(), wake_message}};
}

ScriptCall FairLockCore::resolve_call(thread_id owner, long long expected, milliseconds keep_lease) const {
  return {&scripts::fair_resolve_acquire,
          {name_key(), channel_key(), queue_},
          {std::to_string(keep_lease.count()), client().owner(owner), publish_command(), wake_message,
           std::to_string(expected)}};
}

}  // namespace warden::detail
