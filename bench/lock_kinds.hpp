// warden-bench: the lock kinds a scenario can run on.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <warden/client.hpp>

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

}  // namespace warden_bench
