// warden-bench: the lock kinds a scenario can run on.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <warden/client.hpp>
#include <warden/permit_expirable_semaphore.hpp>
#include <warden/semaphore.hpp>

namespace warden_bench {

// A lock handle of any kind, seen through the only two calls workers make.
// The std::function indirection costs nanoseconds against a Redis round trip
// of tens of microseconds, and lets every kind share one worker loop.
struct bench_lock {
  std::function<void()> lock;
  std::function<void()> unlock;
};

template <class Handle>
bench_lock erase_lock(Handle handle) {
  auto shared = std::make_shared<Handle>(std::move(handle));
  return {[shared] { shared->lock(); }, [shared] { shared->unlock(); }};
}

// Makes the lock called `name` on `client`.
using lock_factory = std::function<bench_lock(warden::Client& client, const std::string& name)>;

inline bench_lock make_plain_lock(warden::Client& client, const std::string& name) {
  return erase_lock(client.get_lock(name));
}

inline bench_lock make_spin_lock(warden::Client& client, const std::string& name) {
  return erase_lock(client.get_spin_lock(name));
}

// True once warden::Client has get_fair_lock(name).
template <class C, class = void>
struct has_fair_lock : std::false_type {};
template <class C>
struct has_fair_lock<C, std::void_t<decltype(std::declval<C&>().get_fair_lock(std::string_view{}))>> : std::true_type {
};

// The FairLock factory, or an empty one while FairLock does not exist yet.
// The template parameter defers the get_fair_lock call to instantiation, so
// this compiles either way and --fair starts working the day FairLock lands,
// with no change here.
template <class C = warden::Client>
lock_factory fair_lock_factory() {
  if constexpr (has_fair_lock<C>::value) {
    return [](C& client, const std::string& name) { return erase_lock(client.get_fair_lock(name)); };
  } else {
    return {};
  }
}

// A Semaphore of `permits` (set on the fresh name), one permit per pair:
// acquire() and release(1).
inline lock_factory semaphore_factory(std::int64_t permits) {
  return [permits](warden::Client& client, const std::string& name) {
    auto semaphore = std::make_shared<warden::Semaphore>(client.get_semaphore(name));
    semaphore->try_set_permits(permits);
    return bench_lock{[semaphore] { semaphore->acquire(); }, [semaphore] { semaphore->release(); }};
  };
}

// The permit id a worker thread holds: a thread holds one permit at a time.
inline std::string& held_permit_id() {
  thread_local std::string id;
  return id;
}

// A PermitExpirableSemaphore of `permits`, one permit per pair taken with
// acquire() and no lease (kept by the watchdog) and given back by its id.
inline lock_factory permit_semaphore_factory(std::int64_t permits) {
  return [permits](warden::Client& client, const std::string& name) {
    auto semaphore = std::make_shared<warden::PermitExpirableSemaphore>(client.get_permit_expirable_semaphore(name));
    semaphore->try_set_permits(permits);
    return bench_lock{[semaphore] { held_permit_id() = semaphore->acquire(); },
                      [semaphore] { semaphore->release(held_permit_id()); }};
  };
}

}  // namespace warden_bench
