#include "lock/read_write_lock_core.hpp"

#include "lock/keys.hpp"
#include "lock/lock_host.hpp"
#include "warden_scripts.hpp"

namespace warden::detail {
namespace {

// Redisson's messages: the last reader leaving wakes one waiter (only writers
// can be waiting then); the write lock going wakes all, readers may share.
constexpr const char* read_unlock_message = "0";
constexpr const char* write_unlock_message = "1";

}  // namespace

ReadWriteLockCore::ReadWriteLockCore(std::shared_ptr<LockHost> client, std::string name)
    : LockCore(std::move(client), std::move(name)),
      tagged_(keys::tagged(this->name())),
      rw_channel_(keys::rwlock_channel(this->name())) {}

std::string ReadWriteLockCore::wait_channel(thread_id /*owner*/) const { return rw_channel_; }

const Script& ReadWriteLockCore::renew_script() const { return scripts::rwlock_renew; }

std::string ReadWriteLockCore::hold_prefix(thread_id owner) const {
  return keys::rwlock_timeout_prefix(name(), client().owner(owner));
}

ScriptCall ReadWriteLockCore::set_lease_call(thread_id owner, milliseconds lease) const {
  return {&scripts::rwlock_set_lease, {name_key()}, {std::to_string(lease.count()), owner_field(owner), tagged()}};
}

// ---- read ----

ScriptCall ReadLockCore::acquire_call(thread_id owner, milliseconds lease) const {
  return {&scripts::rwlock_read_acquire,
          {name_key(), hold_prefix(owner)},
          {std::to_string(lease.count()), client().owner(owner), client().owner(owner) + ":write"}};
}

ScriptCall ReadLockCore::release_call(thread_id owner, milliseconds /*keep_lease*/, const std::string& request_id,
                                      milliseconds latch_ttl) const {
  // Each remaining read hold keeps its own lease in its own key.
  return {
      &scripts::rwlock_read_release,
      {name_key(), rw_channel(), hold_prefix(owner), keys::unlock_latch(name(), request_id)},
      {"", client().owner(owner), publish_command(), read_unlock_message, std::to_string(latch_ttl.count()), tagged()}};
}

ScriptCall ReadLockCore::force_release_call() const {
  return {&scripts::rwlock_force_release,
          {name_key(), rw_channel()},
          {"", "", publish_command(), read_unlock_message, "read", tagged()}};
}

ScriptCall ReadLockCore::resolve_call(thread_id owner, long long expected, milliseconds keep_lease) const {
  return {&scripts::rwlock_read_resolve,
          {name_key(), rw_channel(), hold_prefix(owner)},
          {std::to_string(keep_lease.count()), client().owner(owner), publish_command(), read_unlock_message,
           std::to_string(expected), tagged()}};
}

bool ReadLockCore::locked(const Inspection& state) const { return state.mode == "read"; }

// ---- write ----

ScriptCall WriteLockCore::acquire_call(thread_id owner, milliseconds lease) const {
  return {&scripts::rwlock_write_acquire,
          {name_key()},
          {std::to_string(lease.count()), owner_field(owner), client().owner(owner)}};
}

ScriptCall WriteLockCore::release_call(thread_id owner, milliseconds keep_lease, const std::string& request_id,
                                       milliseconds latch_ttl) const {
  return {&scripts::rwlock_write_release,
          {name_key(), rw_channel(), keys::unlock_latch(name(), request_id)},
          {std::to_string(keep_lease.count()), owner_field(owner), publish_command(), write_unlock_message,
           std::to_string(latch_ttl.count()), tagged()}};
}

ScriptCall WriteLockCore::force_release_call() const {
  return {&scripts::rwlock_force_release,
          {name_key(), rw_channel()},
          {"", "", publish_command(), write_unlock_message, "write", tagged()}};
}

ScriptCall WriteLockCore::resolve_call(thread_id owner, long long expected, milliseconds keep_lease) const {
  return {&scripts::rwlock_write_resolve,
          {name_key(), rw_channel()},
          {std::to_string(keep_lease.count()), owner_field(owner), publish_command(), write_unlock_message,
           std::to_string(expected), tagged()}};
}

void WriteLockCore::write_owner_field(thread_id owner, std::string& out) const {
  client().write_owner(owner, out);
  out += ":write";
}

const void* WriteLockCore::owner_field_family() const {
  static constexpr char owner_id_and_write = 0;
  return &owner_id_and_write;
}

bool WriteLockCore::locked(const Inspection& state) const { return state.mode == "write"; }

}  // namespace warden::detail
