// A Lock handle of the kind a test or worker names: lock, fair, fenced,
// spin, read or write (a ReadWriteLock's half). Shared by the hand-off tests
// and the worker process that plays their other side.
#pragma once

#include <warden/warden.hpp>

#include <string>

namespace warden::test {

inline Lock lock_by_kind(Client& client, const std::string& kind, const std::string& name) {
  if (kind == "fair") return client.get_fair_lock(name);
  if (kind == "fenced") return client.get_fenced_lock(name);
  if (kind == "spin") return client.get_spin_lock(name);
  if (kind == "read") return client.get_read_write_lock(name).read_lock();
  if (kind == "write") return client.get_read_write_lock(name).write_lock();
  return client.get_lock(name);
}

}  // namespace warden::test
