#include "lock/latch_wait_machine.hpp"

#include <warden/error.hpp>

namespace warden::detail {

LatchWaitMachine::actions LatchWaitMachine::on(const event& e) {
  if (phase_ == phase::done) return {};
  return std::visit([this](const auto& happened) { return on_event(happened); }, e);
}

LatchWaitMachine::actions LatchWaitMachine::end(reason why, std::error_code error) {
  phase_ = phase::done;
  return {finish{why, error}};
}

LatchWaitMachine::actions LatchWaitMachine::on_event(const started& e) {
  if (phase_ != phase::idle) return {};
  if (e.cancelled) return end(reason::cancelled, make_error_code(errc::cancelled));
  phase_ = phase::joining;
  if (e.bounded) return {arm_deadline{}, join{}};
  return {join{}};
}

LatchWaitMachine::actions LatchWaitMachine::on_event(const no_node&) {
  if (phase_ != phase::joining) return {};
  phase_ = phase::pausing;
  return {pause{}};
}

LatchWaitMachine::actions LatchWaitMachine::on_event(const retry_timer_fired&) {
  if (phase_ != phase::pausing) return {};
  phase_ = phase::joining;
  return {join{}};
}

LatchWaitMachine::actions LatchWaitMachine::on_event(const subscription_ready&) {
  if (phase_ != phase::joining) return {};
  phase_ = phase::reading;
  return {read_count{}};
}

LatchWaitMachine::actions LatchWaitMachine::on_event(const count_read& e) {
  if (phase_ != phase::reading) return {};
  if (e.count <= 0) return end(reason::opened);
  if (rejoin_after_read_) {
    rejoin_after_read_ = false;
    phase_ = phase::joining;
    return {join{}};
  }
  phase_ = phase::parked;
  return {park{}};
}

LatchWaitMachine::actions LatchWaitMachine::on_event(const read_failed& e) {
  if (phase_ != phase::reading) return {};
  return end(reason::failed, e.error);
}

LatchWaitMachine::actions LatchWaitMachine::on_event(const permit_taken&) {
  if (phase_ != phase::parked) return {};
  phase_ = phase::reading;
  return {read_count{}};
}

LatchWaitMachine::actions LatchWaitMachine::on_event(const woken& e) {
  bool reconnect = e.why == wake_cause::reconnect;
  if (phase_ == phase::reading) {
    // A message is owed as a permit by the subscriber; a reconnect is not.
    if (reconnect) rejoin_after_read_ = true;
    return {};
  }
  if (phase_ != phase::parked) return {};
  if (reconnect) {
    phase_ = phase::joining;
    return {join{}};
  }
  phase_ = phase::reading;
  return {read_count{}};
}

LatchWaitMachine::actions LatchWaitMachine::on_event(const deadline_passed&) { return end(reason::timed_out); }

LatchWaitMachine::actions LatchWaitMachine::on_event(const cancelled&) {
  return end(reason::cancelled, make_error_code(errc::cancelled));
}

LatchWaitMachine::actions LatchWaitMachine::on_event(const shut_down&) {
  return end(reason::shut_down, make_error_code(errc::shut_down));
}

WakeRules::actions LatchWakeRules::on(const event& e) const {
  // Either message changes the count ("0" opened the latch, "1" set a new
  // count or deleted it): every waiter reads it again, asleep or not.
  if (std::holds_alternative<message>(e)) return {owe_unparked{}, wake_parked{}};
  if (const auto* sleeping = std::get_if<parking>(&e)) {
    if (sleeping->permits > 0) return {set_permits{sleeping->permits - 1}, retry_now{}};
    return {};
  }
  if (const auto* gone = std::get_if<left>(&e)) {
    // A permit is a re-read owed to someone still waiting; never more than them.
    if (gone->permits > gone->waiters) return {set_permits{gone->waiters}};
  }
  return {};
}

const WakeRules& latch_wake_rules() {
  static const LatchWakeRules rules;
  return rules;
}

}  // namespace warden::detail
