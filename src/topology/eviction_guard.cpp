#include "topology/eviction_guard.hpp"

namespace warden::detail {

EvictionGuard::actions EvictionGuard::on(const event& e) {
  return std::visit([this](const auto& one) { return on_event(one); }, e);
}

EvictionGuard::actions EvictionGuard::on_event(const read& e) {
  actions out;
  bool evictable = may_evict_locks(e.settings);
  if (evictable && !evictable_) {
    // Refused before it is said, so that whoever hears of it finds the
    // refusal in force.
    if (mode_ == eviction_guard_mode::refuse) {
      refusing_ = true;
      out.push_back(refuse{});
    }
    out.push_back(warn{refusing_});
  } else if (!evictable && evictable_) {
    if (refusing_) {
      refusing_ = false;
      out.push_back(allow{});
    }
    out.push_back(report_safe{});
  }
  evictable_ = evictable;
  out.push_back(read_again{reread_every_});
  return out;
}

EvictionGuard::actions EvictionGuard::on_event(const read_denied&) {
  // What an earlier read found stands: an ACL changed under a running
  // Client says nothing about the server's memory.
  actions out;
  if (!unreadable_reported_) {
    unreadable_reported_ = true;
    out.push_back(report_unreadable{});
  }
  return out;
}

EvictionGuard::actions EvictionGuard::on_event(const read_failed&) {
  actions out;
  out.push_back(read_again{reread_every_});
  return out;
}

}  // namespace warden::detail
