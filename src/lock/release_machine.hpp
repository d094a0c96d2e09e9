// What the answer to a release means, as a pure machine
// (docs/pure-machines.md): released (the last hold or one of several), not
// held by the owner (never, or its lease expired: a hold lost), failed (the
// hold is no longer renewed and expires with its lease), released but short
// of replicas (logged), or never sent because an acquire of the same owner
// was still being settled. The release path (release_op.cpp) performs the
// actions.
#pragma once

#include <system_error>
#include <variant>

#include "io/action_list.hpp"

namespace warden::detail {

class ReleaseMachine {
 public:
  // What the release script's answer was, as read by the driver.
  enum class reply {
    released,   // 1: the owner's last hold, the lock is free
    decreased,  // 0: one hold of several released, the lock is still held
    not_held,   // nil: the owner holds nothing here
    failed,     // a transport error or a lost reply (`error`)
    bad_reply,  // an error reply or one the script does not give (`error`)
  };

  // ---- events ----
  struct answered {
    reply kind = reply::failed;
    std::error_code error;
    bool believed = false;           // the hold book vouched for a hold (not reported lost already)
    bool knew_of = false;            // the hold book knew of a hold, even one reported lost
    bool short_of_replicas = false;  // done on the master, too few replicas acknowledged it
  };
  // The owner's lane stayed busy (an acquire being settled) until the deadline.
  struct lane_timed_out {
    bool believed = false;
  };
  using event = std::variant<answered, lane_timed_out>;

  // ---- actions ----
  enum class reason {
    released,
    lane_timed_out,  // never sent
    failed,          // no answer: the hold is no longer renewed
    bad_reply,
    lease_expired,  // held, but the lease ran out or the key was deleted
    not_owner,
  };
  struct forget {};  // the hold book lets go of the owner's hold
  struct released {  // the hold book counts one hold off
    bool freed = false;
  };
  struct warn_short_of_replicas {};
  struct answer {
    reason why = reason::released;
    std::error_code error;
    bool freed = false;
    bool short_of_replicas = false;
    // The hold is lost, and this is news: tell the lost-hold listeners.
    bool tell_listeners = false;
    // ... and answer only once they ran (on the I/O thread): an unlock()
    // that read this answer itself then hands it all over.
    bool listeners_first = false;
  };
  using action = std::variant<forget, released, warn_short_of_replicas, answer>;
  using actions = action_list<action, 3>;

  actions on(const event& e) const;

 private:
  actions on_event(const answered& e) const;
  actions on_event(const lane_timed_out& e) const;
};

}  // namespace warden::detail
