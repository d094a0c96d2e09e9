#include "lock/release_machine.hpp"

#include <warden/error.hpp>

namespace warden::detail {

ReleaseMachine::actions ReleaseMachine::on(const event& e) const {
  return std::visit([this](const auto& happened) { return on_event(happened); }, e);
}

ReleaseMachine::actions ReleaseMachine::on_event(const answered& e) const {
  switch (e.kind) {
    case reply::failed:
    case reply::bad_reply:
      // Nothing says whether it ran: the hold is no longer renewed and
      // expires with its lease. A hold the book vouched for is news to the
      // listeners; one it had reported lost was told already.
      return {forget{}, answer{e.kind == reply::failed ? reason::failed : reason::bad_reply, e.error, false, false,
                               e.believed, e.believed}};
    case reply::not_held:
      // Held once: its lease expired or the key was deleted meanwhile.
      if (e.knew_of) {
        return {forget{}, answer{reason::lease_expired, make_error_code(errc::lease_expired), false, false, e.believed,
                                 e.believed}};
      }
      return {forget{}, answer{reason::not_owner, make_error_code(errc::not_owner)}};
    case reply::released:
    case reply::decreased: {
      bool freed = e.kind == reply::released;
      actions out{released{freed}};
      // Done on the master; a failover before a replica has it could bring
      // the hold back, until its lease runs out.
      if (e.short_of_replicas) out.push_back(warn_short_of_replicas{});
      out.push_back(answer{reason::released, {}, freed, e.short_of_replicas});
      return out;
    }
  }
  return {};
}

ReleaseMachine::actions ReleaseMachine::on_event(const lane_timed_out& e) const {
  // Never sent: the hold is no longer renewed and expires with its lease.
  return {forget{}, answer{reason::lane_timed_out, make_error_code(errc::timed_out), false, false, e.believed}};
}

}  // namespace warden::detail
