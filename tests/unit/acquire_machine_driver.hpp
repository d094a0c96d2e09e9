// What the AcquireMachine tests share (the acquire_machine*_test.cpp files):
// the machine's settings, and helpers that drive a whole acquire and find
// an action among the ones an event returns.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <variant>

#include <warden/error.hpp>

#include "lock/acquire_machine.hpp"

namespace acquire_machine_test {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using warden::wake_cause;
using warden::detail::AcquireMachine;
using warden::detail::clock;
using M = AcquireMachine;

const clock::time_point t0 = clock::time_point{} + 1000h;
constexpr milliseconds unknown_ttl_wait = 5s;
constexpr milliseconds command_time = 1s;
constexpr int max_unknown = 3;

// A copy: the actions are often a temporary.
template <class Action>
std::optional<Action> find(const M::actions& out) {
  for (const auto& action : out) {
    if (auto* found = std::get_if<Action>(&action)) return *found;
  }
  return std::nullopt;
}

template <class Action>
bool has(const M::actions& out) {
  return find<Action>(out).has_value();
}

inline M make_machine(std::optional<milliseconds> wait, bool keep_queue_place = false) {
  return M(t0, wait, max_unknown, unknown_ttl_wait, command_time, keep_queue_place);
}

// Starts `m` and sends its first try at `now` (not joined early).
inline void first_try(M& m, clock::time_point now = t0) {
  ASSERT_TRUE(has<M::enter_lane>(m.on(M::started{})));
  ASSERT_TRUE(has<M::send_try>(m.on(M::admitted{now})));
}

inline M::answered held_for(clock::time_point now, milliseconds ttl) {
  M::answered a{now, M::answer::held};
  a.ttl = ttl;
  return a;
}

}  // namespace acquire_machine_test
