#include "lock/permit_wait_machine.hpp"

#include <warden/error.hpp>

namespace warden::detail {

using machine = PermitWaitMachine;

machine::actions machine::on(const event& e) {
  return std::visit([this](const auto& happened) { return on_event(happened); }, e);
}

machine::actions machine::try_now(clock::time_point now) {
  state_ = state::trying;
  woken_meanwhile_ = false;
  last_try_ = now >= bound_;
  return {send_try{now, last_try_}};
}

machine::actions machine::wait(clock::time_point now, std::optional<clock::time_point> retry_at) {
  actions todo;
  if (timer_armed_) todo.push_back(disarm{});
  auto at = bound_;
  if (retry_at && *retry_at < at) at = std::max(*retry_at, now);
  timer_armed_ = at != clock::time_point::max();
  if (timer_armed_) todo.push_back(arm_timer{at});
  // Last: parking may be answered at once with a wake-up owed (a release
  // came while the try was in flight), which the driver feeds straight back.
  state_ = state::parked;
  todo.push_back(park{});
  return todo;
}

machine::actions machine::end(outcome result, std::error_code error) {
  actions todo;
  state_ = state::done;
  if (timer_armed_) todo.push_back(disarm{});
  timer_armed_ = false;
  if (joined_) todo.push_back(leave{result != outcome::acquired && wake_unused_});
  joined_ = false;
  todo.push_back(finish{result, error});
  return todo;
}

machine::actions machine::on_event(const started& e) {
  if (e.cancelled) return end(outcome::failed, make_error_code(errc::cancelled));
  if (e.subscribed && e.now < bound_) {
    // Joined before the try runs: every release published after the try
    // reaches this waiter, so a refusal means sleep at once.
    joined_ = true;
    auto todo = try_now(e.now);
    actions out{join{}};
    out.append(todo);
    return out;
  }
  return try_now(e.now);
}

machine::actions machine::on_event(const answered& e) {
  if (state_ != state::trying) return {};
  if (e.kind != answer::failed && e.kind != answer::lost) wake_unused_ = false;
  switch (e.kind) {
    case answer::taken:
      if (!cancel_pending_) return end(outcome::acquired, {});
      pending_error_ = make_error_code(errc::cancelled);
      state_ = state::giving_back;
      return {give_back{}};
    case answer::taken_short:
      pending_error_ = cancel_pending_ ? make_error_code(errc::cancelled) : e.error;
      state_ = state::giving_back;
      return {give_back{}};
    case answer::lost:
      state_ = state::settling;
      settle_keeps_ = !cancel_pending_;
      return {settle{settle_keeps_}};
    case answer::failed:
      return end(outcome::failed, e.error);
    case answer::refused:
      break;
  }
  if (cancel_pending_) return end(outcome::failed, make_error_code(errc::cancelled));
  if (last_try_) return end(outcome::not_acquired, {});
  // At or past the bound (the try was sent before it): one last try.
  if (e.now >= bound_ || woken_meanwhile_) return try_now(e.now);
  if (!joined_) {
    joined_ = true;
    state_ = state::subscribing;
    return {join{}};  // ready follows: the re-try that no release can slip past
  }
  if (!ready_) {
    state_ = state::subscribing;
    return {};
  }
  return wait(e.now, e.retry_at);
}

machine::actions machine::on_event(const settled& e) {
  if (state_ != state::settling) return {};
  switch (e.kind) {
    case settle_answer::taken:
      // Asked to give it back: the settle did.
      if (!settle_keeps_) return end(outcome::failed, make_error_code(errc::cancelled));
      if (!cancel_pending_) return end(outcome::acquired, {});
      // Asked to keep it before the cancel came: give it back now.
      pending_error_ = make_error_code(errc::cancelled);
      state_ = state::giving_back;
      return {give_back{}};
    case settle_answer::not_taken:
      if (cancel_pending_) return end(outcome::failed, make_error_code(errc::cancelled));
      if (last_try_ && e.now >= bound_) return end(outcome::not_acquired, {});
      return try_now(e.now);
    case settle_answer::failed:
      break;
  }
  // Nobody could tell whether the lost try took its permits (the settle
  // has a bounded wait's deadline, or the server stayed out of reach): the
  // caller is answered now, and a give-back settle follows in the
  // background, so that permits nobody will release are not left taken.
  auto out = end(outcome::failed, e.error);
  if (settle_keeps_) out.push_back(settle{false});
  return out;
}

machine::actions machine::on_event(const ready& e) {
  ready_ = true;
  if (state_ != state::subscribing) return {};
  return try_now(e.now);
}

machine::actions machine::on_event(const woken& e) {
  if (state_ == state::trying) {
    woken_meanwhile_ = true;
    return {};
  }
  if (state_ != state::parked) return {};
  wake_unused_ = e.why == cause::message;
  actions todo;
  if (timer_armed_) todo.push_back(disarm{});
  timer_armed_ = false;
  todo.append(try_now(e.now));
  return todo;
}

machine::actions machine::on_event(const timer_fired& e) {
  timer_armed_ = false;
  if (state_ == state::trying) {
    woken_meanwhile_ = true;
    return {};
  }
  if (state_ != state::parked) return {};
  return try_now(e.now);
}

machine::actions machine::on_event(const node_moved&) {
  if (state_ != state::parked) return {};
  // Leave the old node's subscriber and join the new one's; ready follows.
  ready_ = false;
  state_ = state::subscribing;
  return {leave{false}, join{}};
}

machine::actions machine::on_event(const given_back&) {
  if (state_ != state::giving_back) return {};
  return end(outcome::failed, pending_error_);
}

machine::actions machine::on_event(const cancelled&) {
  switch (state_) {
    case state::trying:
    case state::settling:
      cancel_pending_ = true;  // the answer decides what to undo
      return {};
    case state::giving_back:
    case state::done:
      return {};
    default:
      return end(outcome::failed, make_error_code(errc::cancelled));
  }
}

machine::actions machine::on_event(const shut_down&) {
  if (state_ == state::done) return {};
  return end(outcome::failed, make_error_code(errc::shut_down));
}

}  // namespace warden::detail
