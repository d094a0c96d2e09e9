// The library's own way to the shared state behind the public handles. The
// handles declare detail::access a friend instead of offering public
// accessors, so user code never sees (or depends on) a detail type; only code
// that includes this private header reaches the cores.
#pragma once

#include <memory>
#include <utility>

#include <warden/client.hpp>
#include <warden/fair_lock.hpp>
#include <warden/fenced_lock.hpp>
#include <warden/lock.hpp>
#include <warden/multi_lock.hpp>
#include <warden/red_lock.hpp>
#include <warden/spin_lock.hpp>

namespace warden::detail {

class ClientCore;
class CompositeCore;
class LockCore;

struct access {
  static const std::shared_ptr<LockCore>& core(const Lock& lock) noexcept { return lock.core_; }
  static const std::shared_ptr<ClientCore>& core(const Client& client) noexcept { return client.core_; }
  static const std::shared_ptr<CompositeCore>& core(const MultiLock& lock) noexcept { return lock.core_; }
  static const std::shared_ptr<CompositeCore>& core(const RedLock& lock) noexcept { return lock.core_; }

  // A handle (Lock, FairLock, FencedLock, SpinLock) on `core`.
  template <class Handle>
  static Handle make(std::shared_ptr<LockCore> core) noexcept {
    return Handle(std::move(core));
  }
};

}  // namespace warden::detail
