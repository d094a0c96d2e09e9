#include "lock/acquire_machine.hpp"

#include <algorithm>

#include <warden/error.hpp>

namespace warden::detail {

AcquireMachine::AcquireMachine(clock::time_point start, std::optional<milliseconds> wait, int max_unknown,
                               milliseconds unknown_ttl_wait, milliseconds command_time, bool keep_queue_place,
                               std::optional<SpinDelays> polling)
    : unknown_ttl_wait_(unknown_ttl_wait),
      polling_(polling ? std::make_unique<SpinDelays>(std::move(*polling)) : nullptr),
      max_unknown_(max_unknown),
      keep_queue_place_(keep_queue_place) {
  // A wait too long to represent as a time point (milliseconds::max() and the
  // like) means "for ever", not an overflow into the past.
  if (wait && *wait < std::chrono::duration_cast<milliseconds>(clock::time_point::max() - start)) {
    deadline_ = start + *wait;
    // A bounded wait answers by its deadline plus one command's time: the
    // last try may be sent at the deadline and gets that long to answer.
    bound_ =
        *deadline_ > clock::time_point::max() - command_time ? clock::time_point::max() : *deadline_ + command_time;
  }
}

AcquireMachine::actions AcquireMachine::on(const event& e) {
  return std::visit([this](const auto& happened) { return on_event(happened); }, e);
}

// Try (again): the try waits for the owner's lane, never past the bound.
void AcquireMachine::retry(actions& out) {
  if (finished_) return;
  in_flight_ = true;
  poked_ = false;
  out.push_back(
      enter_lane{bound_ != clock::time_point::max() ? std::optional<clock::time_point>(bound_) : std::nullopt});
}

void AcquireMachine::end(actions& out, reason why, std::error_code error, bool acquired) {
  if (finished_) return;
  finished_ = true;
  finish done;
  done.why = why;
  done.error = error;
  done.acquired = acquired;
  // A waiter that used an unlock message's wake-up and leaves without the
  // lock hands it on, or the others would sleep out the TTL of a free lock.
  done.pass_wake = !acquired && woken_;
  // A waiter that ends without the lock leaves the fair queue before its
  // caller hears back, unless the caller keeps its place (a MultiLock between
  // its attempts). Shutting down, nothing is waited for any more.
  if (!acquired && waited_ && !keep_queue_place_) {
    done.queue = error == errc::shut_down ? queue_exit::background : queue_exit::wait;
  }
  out.push_back(done);
}

void AcquireMachine::held(actions& out, clock::time_point now, milliseconds ttl) {
  if (past_deadline(now)) return end(out, reason::timed_out, {});
  // PTTL 0 is a key in its last millisecond (a retry timed to the lease tends
  // to land exactly then): wait that millisecond, not as if there were no TTL.
  // Only a negative PTTL means the key has no expiry.
  auto sleep = ttl.count() >= 0 ? std::max(ttl, milliseconds{1}) : unknown_ttl_wait_;
  // A poller is told of no release: it comes back after its back-off delay,
  // or when the lease runs out if that is sooner.
  if (polling_) sleep = std::min(sleep, polling_->next());
  if (deadline_) sleep = std::min(sleep, left(now));
  if (polling_) return out.push_back(pause{sleep});
  if (!joined_) {
    joined_ = true;
    ready_is_news_ = true;
    return out.push_back(subscribe{sleep});
  }
  // Woken while the try was in flight: the answer may predate the wake-up.
  if (poked_) return retry(out);
  woken_ = false;
  out.push_back(park{sleep});
}

void AcquireMachine::lost(actions& out) {
  if (unknown_ >= max_unknown_) {
    // Still unsettled: take it back in the background, answer now.
    out.push_back(settle{false});
    return end(out, reason::failed, last_error_);
  }
  ++unknown_;
  in_flight_ = true;
  out.push_back(settle{true});
}

// `ran`: the try ran and too few replicas acknowledged it (it is being taken
// back); else it was refused unsent. A bounded wait backs off and tries again
// while it lasts, the delay cut to the time left so that the last try is made
// at the deadline (replicas that come back within it are worth waiting for);
// lock() waits for as long as tries are refused (a failover's new master gets
// its replicas back) and max_unknown more times for tries that ran.
void AcquireMachine::short_of_replicas(actions& out, clock::time_point now, bool ran, milliseconds delay) {
  if (finished_) return;
  if (ran) ++unacknowledged_;
  bool failed;
  if (deadline_) {
    failed = now >= *deadline_;
    if (!failed) delay = std::min(delay, left(now));
  } else {
    failed = unacknowledged_ > max_unknown_;
  }
  if (!failed) return out.push_back(pause{delay});
  out.push_back(note_sync_failure{});
  if (!taking_back_) return end(out, reason::replica_sync_failed, make_error_code(errc::replica_sync_failed));
  // The answer waits for the take-back, so that the failed call leaves no key
  // behind it; but not past the caller's bound.
  sync_failed_ = true;
  out.push_back(arm_sync_guard{});
}

AcquireMachine::actions AcquireMachine::on_event(const started& e) {
  actions out;
  if (e.cancelled) {
    end(out, reason::cancelled_before_start, make_error_code(errc::cancelled));
    return out;
  }
  retry(out);
  return out;
}

AcquireMachine::actions AcquireMachine::on_event(const admitted& e) {
  if (finished_) return {leave_lane{}};
  // Past the deadline this try is the last one: nothing to wait in line for,
  // and nothing to join the waiters for.
  bool last = past_deadline(e.now);
  if (!last) waited_ = true;
  actions out;
  if (!last && !polling_ && !joined_) out.push_back(join_if_subscribed{});
  out.push_back(send_try{e.now, last});
  return out;
}

AcquireMachine::actions AcquireMachine::on_event(const lane_timed_out&) {
  actions out;
  in_flight_ = false;
  end(out, reason::lane_timed_out, make_error_code(errc::timed_out));
  return out;
}

AcquireMachine::actions AcquireMachine::on_event(const joined_early&) {
  // The subscription is in place already: its confirmation is no news, and a
  // held lock means sleep at once, without a re-try after subscribing.
  joined_ = true;
  ready_is_news_ = false;
  return {};
}

AcquireMachine::actions AcquireMachine::on_event(const answered& e) {
  actions out;
  if (e.kind == answer::lost) {
    // The lane stays held until the try is settled.
    last_error_ = e.error;
    if (finished_) {
      out.push_back(settle{false});
      return out;
    }
    in_flight_ = false;
    lost(out);
    return out;
  }
  if (finished_) {
    // Shut down or given up while the script ran: do not keep what it took.
    if (e.nil_reply) {
      out.push_back(settle{false});
    } else {
      out.push_back(leave_lane{});
    }
    return out;
  }
  in_flight_ = false;
  if (e.kind == answer::acquired_short) {
    // A failover now could hand the lock to someone else while this caller
    // believes it holds it: take it back (inside the lane, which the next try
    // waits for), then try again or give up.
    taking_back_ = true;
    out.push_back(settle{false});
    short_of_replicas(out, e.now, true, e.delay);
    return out;
  }
  out.push_back(leave_lane{});
  switch (e.kind) {
    case answer::refused_short:
      // It did not run, so it does not count as a failure; the wait goes on.
      short_of_replicas(out, e.now, false, e.delay);
      break;
    case answer::not_run:
      // It had no effect: try again while the caller's wait lasts.
      if (e.now < bound_) {
        retry(out);
      } else {
        end(out, reason::not_run, e.error);
      }
      break;
    case answer::failed:
      last_error_ = e.error;
      end(out, reason::transport, e.error);
      break;
    case answer::would_deadlock:
      end(out, reason::would_deadlock, make_error_code(errc::would_deadlock));
      break;
    case answer::error_reply:
      end(out, reason::error_reply, e.error);
      break;
    case answer::bad_reply:
      end(out, reason::bad_reply, make_error_code(errc::protocol_error));
      break;
    case answer::acquired:
      end(out, reason::acquired, {}, true);
      break;
    case answer::held:
      held(out, e.now, e.ttl);
      break;
    case answer::lost:
    case answer::acquired_short:
      break;  // dealt with above
  }
  return out;
}

AcquireMachine::actions AcquireMachine::on_event(const settled& e) {
  actions out;
  bool answered = e.kind != settle_answer::unanswered;
  bool applied = e.kind == settle_answer::applied || e.kind == settle_answer::applied_short;
  if (!e.keep || finished_) {
    // A take-back, or the caller left while a keeping settle ran: a kept hold
    // must now be given back (the try is still the count's last step: the
    // lane is held).
    if (e.keep && applied) {
      out.push_back(settle{false});
      return out;
    }
    if (!answered) out.push_back(log_take_back_failed{taking_back_});
    // A take-back that gave up unanswered leaves the lane only once the
    // attempt is marked (docs/internals.md, "Settling"); shutting down,
    // nothing more is sent. The caller's answer does not wait for it.
    if (!e.keep && !answered && e.error != errc::shut_down) {
      out.push_back(mark_given_up{});
    } else {
      out.push_back(leave_lane{});
    }
    if (!e.keep && taking_back_) {
      taking_back_ = false;
      if (sync_failed_) end(out, reason::replica_sync_failed, make_error_code(errc::replica_sync_failed));
    }
    return out;
  }
  in_flight_ = false;
  if (!answered) {
    if (e.error) last_error_ = e.error;
    if (e.now >= bound_) {
      out.push_back(settle{false});
      end(out, reason::unknown_at_deadline, last_error_ ? last_error_ : make_error_code(errc::timed_out));
      return out;
    }
    lost(out);  // settle again, or give up and take it back
    return out;
  }
  if (e.kind == settle_answer::applied_short) {
    taking_back_ = true;
    out.push_back(settle{false});
    short_of_replicas(out, e.now, true, e.delay);
    return out;
  }
  out.push_back(leave_lane{});
  if (applied) {
    // The lock is held: reporting a time-out would leak it.
    end(out, reason::acquired, {}, true);
  } else if (past_deadline(e.now)) {
    end(out, reason::timed_out, {});
  } else {
    retry(out);
  }
  return out;
}

AcquireMachine::actions AcquireMachine::on_event(const marked& e) {
  // Answered, the owner's next command may go; unanswered, the mark is sent
  // again, as the copy it guards against may still run.
  if (e.answered || e.error == errc::shut_down) return {leave_lane{}};
  return {mark_given_up{}};
}

AcquireMachine::actions AcquireMachine::on_event(const subscription_ready&) {
  actions out;
  // Ready after joining before the first try is no news: the try is going.
  if (!ready_is_news_ || finished_) return out;
  if (in_flight_) {
    poked_ = true;
    return out;
  }
  out.push_back(disarm{});
  retry(out);
  return out;
}

AcquireMachine::actions AcquireMachine::on_event(const woken& e) {
  actions out;
  if (finished_) return out;
  woken_ = true;
  out.push_back(count_wake{e.why});
  if (in_flight_) {
    poked_ = true;  // the answer in flight may predate the wake-up: re-try after it
    return out;
  }
  out.push_back(disarm{});
  retry(out);
  return out;
}

AcquireMachine::actions AcquireMachine::on_event(const timer_fired&) {
  actions out;
  if (finished_ || in_flight_) return out;
  out.push_back(unpark{});
  out.push_back(count_wake{wake_cause::timer});
  retry(out);
  return out;
}

AcquireMachine::actions AcquireMachine::on_event(const permit_taken&) {
  // A wake-up that came while it was not asleep.
  actions out;
  out.push_back(count_wake{wake_cause::message});
  retry(out);
  return out;
}

AcquireMachine::actions AcquireMachine::on_event(const node_moved& e) {
  // Its unlock messages are published where the lock lives now: join there;
  // the join re-tries once confirmed.
  actions out;
  if (finished_) return out;
  ready_is_news_ = true;
  out.push_back(subscribe{e.wait});
  return out;
}

AcquireMachine::actions AcquireMachine::on_event(const sync_guard_expired&) {
  actions out;
  end(out, reason::replica_sync_failed, make_error_code(errc::replica_sync_failed));
  return out;
}

AcquireMachine::actions AcquireMachine::on_event(const cancelled&) {
  actions out;
  end(out, reason::cancelled, make_error_code(errc::cancelled));
  return out;
}

AcquireMachine::actions AcquireMachine::on_event(const shut_down&) {
  actions out;
  end(out, reason::shut_down, make_error_code(errc::shut_down));
  return out;
}

}  // namespace warden::detail
