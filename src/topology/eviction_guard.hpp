// Config::eviction_guard for one server, as a pure machine
// (docs/pure-machines.md): what the reads of the server's memory settings
// mean. A server that may evict lock keys is said once (and again only after
// it was found safe in between); with eviction_guard_mode::refuse the server
// refuses acquires until it is safe. A server whose settings cannot be read
// is said once and trusted. Reads repeat every health-check interval while
// they are answered, so a setting changed at run time is noticed; a server
// that denies both reads is asked again only after a reconnect (each one
// costs an entry in its ACL LOG). The node's EvictionWatch performs the
// actions.
#pragma once

#include <chrono>
#include <variant>

#include <warden/config.hpp>

#include "io/action_list.hpp"
#include "topology/memory_settings.hpp"

namespace warden::detail {

class EvictionGuard {
 public:
  // `reread_every`: the health-check interval.
  EvictionGuard(eviction_guard_mode mode, std::chrono::milliseconds reread_every)
      : mode_(mode), reread_every_(reread_every) {}

  // ---- events ----
  // INFO memory or CONFIG GET answered with the settings.
  struct read {
    MemorySettings settings;
  };
  // Both reads were refused (an ACL without INFO and CONFIG, a proxy
  // without them) or gave no settings.
  struct read_denied {};
  // No answer (the connection dropped, the read timed out): nothing learnt.
  struct read_failed {};
  using event = std::variant<read, read_denied, read_failed>;

  // ---- actions ----
  struct refuse {};  // acquires on this server fail from now on
  struct allow {};   // ... no longer
  // Say that the server may evict lock keys (log, observer); `refusing`:
  // and that its acquires are refused.
  struct warn {
    bool refusing = false;
  };
  struct report_safe {};        // say that a server found evictable is safe now
  struct report_unreadable {};  // say that its settings could not be read
  struct read_again {           // read the settings again this long from now
    std::chrono::milliseconds after{0};
  };
  using action = std::variant<refuse, allow, warn, report_safe, report_unreadable, read_again>;
  using actions = action_list<action, 3>;

  actions on(const event& e);

  // Whether acquires on this server are refused now.
  bool refusing() const { return refusing_; }
  // Whether the last read found the server may evict lock keys.
  bool evictable() const { return evictable_; }

 private:
  actions on_event(const read& e);
  actions on_event(const read_denied& e);
  actions on_event(const read_failed& e);

  eviction_guard_mode mode_;
  std::chrono::milliseconds reread_every_;
  bool evictable_ = false;  // as the last read said
  bool refusing_ = false;
  bool unreadable_reported_ = false;
};

}  // namespace warden::detail
