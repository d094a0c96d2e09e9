#include "inspect/options.hpp"

#include <cmath>
#include <stdexcept>

namespace warden::inspect {
namespace {

// "--name=value" or "--name value": the value of an option that takes one.
std::string value_of(const std::vector<std::string>& args, std::size_t& i, const std::string& option) {
  const std::string& arg = args[i];
  if (arg.size() > option.size() && arg.compare(0, option.size(), option) == 0 && arg[option.size()] == '=') {
    return arg.substr(option.size() + 1);
  }
  if (i + 1 >= args.size()) throw std::invalid_argument(option + " needs a value");
  return args[++i];
}

bool is_option(const std::string& arg, const std::string& option) {
  return arg == option || (arg.size() > option.size() && arg.compare(0, option.size() + 1, option + "=") == 0);
}

std::chrono::milliseconds seconds(const std::string& option, const std::string& text) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || !std::isfinite(value) || value <= 0 || value > 86400) {
    throw std::invalid_argument(option + " wants seconds between 0 and 86400, e.g. 0.5 (got '" + text + "')");
  }
  return std::chrono::milliseconds{static_cast<long long>(std::ceil(value * 1000))};
}

}  // namespace

Options parse(const std::vector<std::string>& args) {
  Options options;
  std::vector<std::string> positional;
  bool only_positional = false;
  bool first_is_name = false;  // after "--": even "scan" is a lock name
  bool watch_options = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (only_positional || arg.empty() || arg[0] != '-' || arg == "-") {
      if (positional.empty()) first_is_name = only_positional;
      positional.push_back(arg);
    } else if (arg == "--") {
      only_positional = true;
    } else if (arg == "-h" || arg == "--help") {
      options.what = Options::action::help;
      return options;
    } else if (arg == "--version") {
      options.what = Options::action::version;
      return options;
    } else if (is_option(arg, "--url")) {
      options.url = value_of(args, i, "--url");
    } else if (arg == "--json") {
      options.json = true;
    } else if (arg == "--watch") {
      options.watch = true;
    } else if (is_option(arg, "--interval")) {
      options.interval = seconds("--interval", value_of(args, i, "--interval"));
      watch_options = true;
    } else if (is_option(arg, "--count")) {
      auto text = value_of(args, i, "--count");
      std::size_t used = 0;
      long count = 0;
      try {
        count = std::stol(text, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != text.size() || count < 1) throw std::invalid_argument("--count wants a whole number >= 1");
      options.count = count;
      watch_options = true;
    } else if (is_option(arg, "--timeout")) {
      options.timeout = seconds("--timeout", value_of(args, i, "--timeout"));
    } else if (arg == "--force-unlock") {
      options.force_unlock = true;
    } else if (arg == "-y" || arg == "--yes") {
      options.yes = true;
    } else {
      throw std::invalid_argument("unknown option " + arg + " (see --help)");
    }
  }
  if (positional.empty()) throw std::invalid_argument("which lock? give its NAME, or scan PATTERN (see --help)");
  if (positional[0] == "scan" && !first_is_name) {
    if (positional.size() != 2) throw std::invalid_argument("scan takes one PATTERN, e.g. scan 'orders:*'");
    options.what = Options::action::scan;
    options.pattern = positional[1];
    if (options.force_unlock) throw std::invalid_argument("--force-unlock takes one lock NAME, not scan");
  } else {
    if (positional.size() != 1) {
      throw std::invalid_argument("one lock NAME at a time (got " + std::to_string(positional.size()) +
                                  "; a name that is \"scan\" goes after --)");
    }
    options.name = positional[0];
  }
  if (options.force_unlock && options.watch) throw std::invalid_argument("--force-unlock and --watch do not mix");
  if (options.yes && !options.force_unlock) throw std::invalid_argument("--yes only confirms --force-unlock");
  if (watch_options && !options.watch) {
    throw std::invalid_argument("--interval and --count go with --watch");
  }
  return options;
}

const char* manual() {
  return R"(WARDEN-INSPECT(1)                   warden                   WARDEN-INSPECT(1)

NAME
       warden-inspect - show what Redis holds for a distributed lock

SYNOPSIS
       warden-inspect [--url URL] [--json] [--watch [--interval S] [--count N]] NAME
       warden-inspect [--url URL] --force-unlock [--yes] NAME
       warden-inspect [--url URL] [--json] scan PATTERN
       warden-inspect --help | --version

DESCRIPTION
       Reads the Redis keys of the lock NAME and shows its state, whoever
       wrote it: warden (C++) or Redisson (Java), which share the layout.
       Nothing is written, except with --force-unlock.

       kind      lock, fair (a FairLock: it has a waiter queue), rw (a
                 ReadWriteLock: its hash has a "mode" field), fenced (a
                 FencedLock: it has a token counter), or none when nothing
                 is held. A key that is not a lock is shown as "not a lock".
                 Synchronizers: counter (NAME is a string holding a number:
                 a Semaphore's available permits or a CountDownLatch's
                 count; the layout does not tell which, so both are shown),
                 pes (a PermitExpirableSemaphore: its permits' ZSET
                 {NAME}:timeout exists, or NAME:timeout when NAME holds a
                 '{').
       permits   a pes's available permits, and each acquired permit's id
                 (16 bytes in hex) with the time left until it expires.
       holders   each owner field ("<client id>:<thread id>", ":write" for
                 a read-write lock's writer) with its hold count; for warden
                 clients, the address the client connects from (their
                 connections are named warden:<client id>, see CLIENT LIST).
       ttl       the lock's remaining lease; a read-write lock also shows
                 the lease of each read hold.
       queue     a fair lock's waiters in order, each with the deadline
                 after which the others drop it, and whether it listens on
                 its wake-up channel.
       token     a fenced lock's last fencing token.
       channels  how many connections wait on the lock's channel
                 (PUBSUB NUMSUB): clients parked until it is released. For
                 a counter, both redisson_sc:{NAME} (semaphore waiters) and
                 redisson_countdownlatch__channel__{NAME} (latch waiters).

OPTIONS
       --url URL
              The server: redis://[[user]:password@]host[:port][/db],
              rediss://... (TLS), unix:///path/to/redis.sock[?db=N].
              Default redis://127.0.0.1:6379.

       --json Print one JSON object per state (one line each), for scripts.

       --watch
              Show the state again every --interval seconds (default 1)
              until interrupted, or --count times.

       --force-unlock
              Delete the lock whoever holds it, as a release does: waiters
              are woken (a fair lock's queue head; every waiter of a
              read-write lock). Shows the state and asks for confirmation on
              the terminal; --yes (-y) confirms without asking, and is
              required when standard input is not a terminal. The holders
              are not told: their watchdogs find the lock gone at their
              next renewal and report it lost.

       --timeout S
              Connect and command timeout in seconds (default 3).

       scan PATTERN
              List the locks whose names match PATTERN (Redis glob syntax,
              as SCAN MATCH) with kind, holders and TTL. A lock is a hash
              whose fields are hold counts (plus "mode" for a read-write
              lock); free locks have no key and are not listed.

EXIT STATUS
       0      success (also when the lock is not held)
       1      an error: no connection, a refused command, a key that is
              not a lock, a force-unlock that was declined
       2      bad arguments

EXAMPLES
       warden-inspect orders:42
       warden-inspect --url rediss://:secret@redis.example:6380 --json orders:42
       warden-inspect --watch --interval 0.5 orders:42
       warden-inspect --force-unlock --yes orders:42
       warden-inspect scan 'orders:*'

PERMISSIONS
       An ACL user that may inspect every lock and write nothing (one
       line; give it the password you like):

ACL SETUSER inspect on >secret resetkeys resetchannels -@all +ping +client|setname +multi +exec +type +hgetall +pttl +lrange +zrange +get +time +scan +pubsub|numsub +client|list ~*

       Each lock is read in one MULTI/EXEC; +ping and +client|setname are
       what every warden connection sends, +client|list only shows client
       addresses. Replace ~* by your locks' key patterns to narrow it
       (docs/production.md, "ACL"). --force-unlock runs warden's release
       scripts: it needs the lock user's line given there.
)";
}

}  // namespace warden::inspect
