// Which lock scripts ran, and on whose behalf: read back from the server's
// slow log, which a ScriptLog server records every command in. Lets tests
// count wake-ups (a woken waiter runs its acquire script once more) without
// hooks in the code under test.
#pragma once

#include <string>
#include <vector>

#include "io/script.hpp"
#include "redis_probe.hpp"
#include "test_env.hpp"

namespace warden::test {

// redis-server arguments that make the slow log record every command.
inline std::vector<std::string> log_every_command() {
  return {"--slowlog-log-slower-than", "0", "--slowlog-max-len", "100000"};
}

class ScriptLog {
 public:
  // Loads `scripts` into the server so every run is one EVALSHA (no NOSCRIPT
  // retry to count twice).
  ScriptLog(RedisProbe& probe, const std::vector<const detail::Script*>& scripts) : probe_(probe) {
    for (auto* script : scripts) probe_.command({"SCRIPT", "LOAD", script->body});
  }

  // How many times `script` ran with `arg` among its keys and arguments.
  long long runs(const detail::Script& script, const std::string& arg) {
    long long count = 0;
    auto log = probe_.command({"SLOWLOG", "GET", "-1"});
    for (auto& entry : log.elements) {
      if (entry.elements.size() < 4) continue;
      auto& argv = entry.elements[3].elements;
      if (argv.size() < 3 || (argv[0].str != "EVALSHA" && argv[0].str != "evalsha") || argv[1].str != script.sha1) {
        continue;
      }
      for (std::size_t i = 3; i < argv.size(); ++i) {
        if (argv[i].str == arg) {
          ++count;
          break;
        }
      }
    }
    return count;
  }

 private:
  RedisProbe& probe_;
};

}  // namespace warden::test
