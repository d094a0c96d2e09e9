// A command encoded once as RESP, with what the layers above the wire need
// to know of it: its name for messages, and for a script call the script,
// so that EVALSHA can become EVAL (NOSCRIPT, an ASK redirection).
//
// Routing, parking, resending and WAIT all pass a Command along; the bytes
// are made once, where the command is made. The watchdog encodes a renewal
// batch's arguments itself (append_bulk), so a hundred lock names cost no
// string and no argv array each.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "io/script.hpp"

namespace warden::detail {

// Whether a command is a lock write that waits for replicas (Config::replica_sync,
// applied by the node that sends it).
enum class replica_wait {
  none,  // not a lock write (or one whose loss costs nothing: a take-back)
  hold,  // takes or re-enters a hold: refused unsent while the master has too few replicas attached
  keep,  // renews or releases a hold: always sent; a shortfall is reported, not failed
};

// Appends `value` as one RESP bulk string ("$<length>\r\n<value>\r\n").
void append_bulk(std::string& out, std::string_view value);

class Command {
 public:
  Command() = default;
  Command(const std::vector<std::string>& argv);  // NOLINT: any argv is a command
  Command(std::initializer_list<std::string_view> argv);

  // EVALSHA of `script` for `keys` and `args`.
  static Command evalsha(const Script& script, const std::vector<std::string>& keys,
                         const std::vector<std::string>& args);
  // EVALSHA of `script` whose `count` arguments after the SHA (key count,
  // keys, args) are written in place by `write(bytes)` (append_bulk), with
  // room for about `size` bytes of them made first: a renewal batch's
  // hundred names are copied once, not into a buffer and then again.
  template <class Write>
  static Command evalsha(const Script& script, std::size_t count, std::size_t size, Write&& write) {
    Command out;
    out.script_ = &script;
    out.start("EVALSHA", count + 2, size);
    write(out.bytes_);
    return out;
  }

  const std::string& bytes() const { return bytes_; }
  const std::string& name() const { return name_; }
  // Set: a call of this script (EVALSHA, or EVAL after use_body()).
  const Script* script() const { return script_; }
  bool is_evalsha() const { return script_ != nullptr && !with_body_; }
  // The same call as EVAL with the script's body: for a server that does
  // not know the script, or one reached by ASK, which would answer NOSCRIPT
  // without the ASKING before it.
  void use_body();
  // Every argument exactly `from` becomes `to`; true if any did. Arguments
  // are compared whole, whatever bytes they hold; never the name, and in a
  // script call only ARGV (a key keeps the name it was given).
  bool replace_argument(std::string_view from, std::string_view to);

 private:
  void start(std::string_view name, std::size_t count, std::size_t rest_size);

  std::string bytes_;
  std::string name_;
  std::size_t rest_at_ = 0;  // where the arguments after the SHA/body begin (a script call)
  std::size_t count_ = 0;    // bulk strings after the "*N" header, the name included
  const Script* script_ = nullptr;
  bool with_body_ = false;
};

}  // namespace warden::detail
