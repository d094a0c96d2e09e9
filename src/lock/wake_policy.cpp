#include "lock/wake_policy.hpp"

namespace warden::detail {

WakeRules::actions WakePolicy::on(const event& e) const {
  return std::visit([this](const auto& happened) { return on_event(happened); }, e);
}

WakeRules::actions WakePolicy::on_event(const message& e) const {
  // Everyone: those not parked right now get a permit each (owed first: a
  // woken waiter may leave or park again while the others are woken).
  if (e.payload == "1") return {owe_unparked{}, wake_parked{}};
  return {wake_oldest{}};
}

WakeRules::actions WakePolicy::on_event(const passed_on&) const { return {wake_oldest{}}; }

WakeRules::actions WakePolicy::on_event(const nobody_parked& e) const {
  // Nobody asleep (their tries are in flight): the next one to park re-tries
  // at once. Never more permits than waiters.
  if (e.permits < e.waiters) return {set_permits{e.permits + 1}};
  return {};
}

WakeRules::actions WakePolicy::on_event(const parking& e) const {
  if (e.permits > 0) return {set_permits{e.permits - 1}, retry_now{}};
  return {};
}

WakeRules::actions WakePolicy::on_event(const left& e) const {
  // A permit is a wake-up owed to someone still waiting; never more than them.
  if (e.permits > e.waiters) return {set_permits{e.waiters}};
  return {};
}

const WakeRules& lock_wake_policy() {
  static const WakePolicy policy;
  return policy;
}

}  // namespace warden::detail
