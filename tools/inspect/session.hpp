// warden-inspect's way to Redis: a warden Client (so URLs, TLS, unix sockets,
// AUTH and SELECT work as for any warden program) whose connection also
// carries the tool's plain read commands. Blocking; one thread.
#pragma once

#include <string>
#include <vector>

#include <warden/client.hpp>

#include "inspect/lock_state.hpp"
#include "inspect/options.hpp"
#include "io/reply.hpp"

namespace warden::inspect {

class Session {
 public:
  // Throws warden::Error (errc::invalid_argument) for a bad URL.
  explicit Session(const Options& options);

  // Sends the commands in one batch and waits for every reply (error replies
  // included). Throws warden::Error when the server cannot be reached or a
  // reply does not come in time. They go to the node serving `route_key`
  // (on a cluster, the master of its slot).
  std::vector<detail::Reply> run(std::vector<std::vector<std::string>> commands, const std::string& route_key = {});

  // Everything the keys of `name` say, read in one MULTI/EXEC (so the kind is
  // judged on one moment's keys) and one follow-up round (read hold TTLs,
  // subscriber counts). Throws warden::Error when a command is refused.
  LockState read(const std::string& name);

  // The held locks whose names match `pattern`, by name.
  std::vector<LockState> scan(const std::string& pattern);

  // Deletes the lock as its kind's force_unlock() does (waking waiters).
  // False when there was nothing to delete any more.
  bool force_unlock(const LockState& state);

 private:
  warden::Client client_;
};

}  // namespace warden::inspect
