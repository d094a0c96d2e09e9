// The library's own way to the shared state behind the public handles. The
// handles declare detail::access a friend instead of offering public
// accessors, so user code never sees (or depends on) a detail type; only code
// that includes this private header reaches the cores.
#pragma once

#include <functional>
#include <future>
#include <memory>
#include <utility>

#include <warden/acquire_future.hpp>
#include <warden/client.hpp>
#include <warden/composite_lock.hpp>
#include <warden/fenced_lock.hpp>
#include <warden/lock.hpp>
#include <warden/lock_lost.hpp>

namespace warden::detail {

class ClientCore;
class CompositeCore;
class LockCore;

struct access {
  static const std::shared_ptr<LockCore>& core(const BasicLock& lock) noexcept { return lock.core_; }
  static const std::shared_ptr<ClientCore>& core(const Client& client) noexcept { return client.core_; }
  static const std::shared_ptr<CompositeCore>& core(const CompositeLock& lock) noexcept { return lock.core_; }

  // A handle (Lock, FencedLock) on `core`.
  template <class Handle, class Core>
  static Handle make(std::shared_ptr<Core> core) noexcept {
    return Handle(std::move(core));
  }

  // An AcquireFuture whose `abandon` gives back a hold nobody collected.
  template <class T>
  static AcquireFuture<T> future(std::future<T> future, std::function<void()> abandon) noexcept {
    return AcquireFuture<T>(std::move(future), std::move(abandon));
  }

  // A subscription whose `remove` removes its listener.
  static LostSubscription subscription(std::function<void()> remove) noexcept {
    return LostSubscription(std::move(remove));
  }
};

}  // namespace warden::detail
