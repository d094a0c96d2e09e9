// A Redis reply as plain values (io/reply_reader builds them as hiredis
// parses), so protocol logic can be written and tested against them.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace warden::detail {

struct Reply {
  enum class kind { nil, string, status, error, integer, array };

  kind type = kind::nil;
  std::string str;  // string, status and error text
  long long integer = 0;
  std::vector<Reply> elements;

  static Reply make_integer(long long value) {
    Reply r;
    r.type = kind::integer;
    r.integer = value;
    return r;
  }
  static Reply make_string(std::string value) {
    Reply r;
    r.type = kind::string;
    r.str = std::move(value);
    return r;
  }
  static Reply make_error(std::string value) {
    Reply r;
    r.type = kind::error;
    r.str = std::move(value);
    return r;
  }

  bool is_nil() const { return type == kind::nil; }
  bool is_error() const { return type == kind::error; }
  bool is_integer() const { return type == kind::integer; }
};

// What a reply means, decided in one place. An error reply's code is its
// first word (up to the first space), compared whole, so that BUSYKEY is not
// taken for BUSY; everything after it is free text that differs between
// server versions.
enum class reply_class {
  ok,  // not an error reply
  // The server refused the command before running any of it (see did_not_run).
  did_not_run_loading,      // LOADING: loading its data set
  did_not_run_busy,         // BUSY: running a long script
  did_not_run_masterdown,   // MASTERDOWN: a replica that lost its master
  did_not_run_tryagain,     // TRYAGAIN: a cluster slot in flux
  did_not_run_clusterdown,  // CLUSTERDOWN: the cluster is down
  did_not_run_noscript,     // NOSCRIPT: the script is not cached (send EVAL)
  wrong_type,               // WRONGTYPE (Redis), WARDEN_WRONG_TYPE (a script's own check)
  would_deadlock,           // WARDEN_WOULD_DEADLOCK: a script says the call can never succeed
  auth_required,            // NOAUTH: a password is needed and none was accepted
  auth_refused,             // WRONGPASS: wrong password, or no such (enabled) user
  no_permission,            // NOPERM: the ACL user may not run the command or touch the key
  moved,                    // MOVED SLOT HOST:PORT: the slot lives elsewhere for good
  ask,                      // ASK SLOT HOST:PORT: ask that node, this once (slot migrating)
  readonly,                 // READONLY: a replica refused a write
  other_error,              // any other error reply (ERR ..., a script error, ...)
};

reply_class classify(const Reply& reply);

// Where a MOVED or ASK reply sends the command. `host` is empty when the
// server does not know its own address (it then means the node that sent the
// redirection), and may be an IPv6 address (the port is after the last ':').
struct Redirect {
  std::uint16_t slot = 0;  // 0..16383
  std::string host;
  std::uint16_t port = 0;
};

// The target of a MOVED or ASK reply; nullopt for any other reply, and for a
// MOVED/ASK whose slot or address cannot be read (classify() calls that one
// other_error).
std::optional<Redirect> redirect_of(const Reply& reply);

// An error reply's text after its code, leading spaces dropped ("" for a
// reply that is not an error or carries only a code).
std::string_view error_detail(const Reply& reply);

// Whether the server refused the command before running any of it: loading,
// busy, a replica without its master, a cluster slot in flux, or an unknown
// script (the did_not_run_* classes). Sending the same command again is then
// safe, even one that is not idempotent.
bool did_not_run(reply_class kind);
bool did_not_run(const Reply& reply);

// What a command's handler receives: either a transport error (error set, no
// reply) or the server's reply, which may itself be an error reply.
//
// `not_run` with an error: the server kept refusing the command with a "did
// not run" reply (see did_not_run) until the deadline; `reply` holds the last
// refusal. Unlike a plain time-out, the command certainly had no effect.
struct Response {
  std::error_code error;
  Reply reply;
  bool not_run = false;
  // With errc::timed_out (or the last connect error) and not_run: the command
  // was never written, because the link could not have it answered before
  // its deadline (overload: io/send_window.hpp) or never came up. It
  // certainly had no effect; unlike a refusal it is not worth trying again
  // within the same wait, which would only add to the overload.
  bool unsent = false;
  // A transport error's cause in words, when the link knows it (why the
  // connection could not be made or was lost: "connect timed out after
  // 1000 ms", a TLS verification failure, ...).
  std::string detail = {};
  // A lock write that waited for replicas (Config::replica_sync) and ran,
  // but too few acknowledged it: why, in words ("0 of 1 replicas
  // acknowledged it within 1000 ms"). Empty when enough did, or none were
  // asked for.
  std::string replica_shortfall = {};

  bool ok() const { return !error && !reply.is_error(); }
  // The command may or may not have taken effect: its reply was lost.
  bool outcome_unknown() const;
};

// A transport error for messages: the error's own text, then its cause when
// known ("TLS certificate verification failed: the server's certificate ...");
// a cause that begins with the error's text stands alone ("connection refused
// (ECONNREFUSED)", not "connection refused: connection refused ...").
std::string describe_error(const Response& response);

// The warden::errc an error reply stands for: WRONGTYPE (from Redis) and
// WARDEN_WRONG_TYPE (from a script's own check) are errc::wrong_type, NOAUTH
// and WRONGPASS are errc::authentication_failed, anything else
// errc::server_error.
std::error_code error_reply_code(const Reply& reply);

// A connection's set-up command (AUTH or SELECT) answered with an error:
// whether that is permanent and how to say it. A refusal of the credentials
// or the database is errc::authentication_failed (permanent: retrying cannot
// help); any other error (e.g. too many clients) is errc::connection_refused,
// retried like a failed connect. `message` is "COMMAND failed: WHY (REPLY)"
// in words a user can act on; the reply never carries the password.
// `with_username`: the AUTH named an ACL user.
struct SetupRefusal {
  std::error_code error;
  std::string message;
};
SetupRefusal describe_auth_refusal(std::string_view command, const Reply& reply, bool with_username);

// Checks that `reply` is of one of the `expected` kinds. Returns {} if so,
// error_reply_code() for an error reply, and errc::protocol_error for a reply
// of another kind (a peer answering +OK where a script returns an integer is
// not the server warden was written for: its answer must not be read as a
// yes or a no).
std::error_code reply_problem(const Reply& reply, std::initializer_list<Reply::kind> expected);

// A readable description of `reply`'s problem, for error messages.
std::string describe_problem(const Reply& reply, std::initializer_list<Reply::kind> expected);

// The response of `what`, a script that answers an integer (a count, a
// flag), read for the handle that asked: the integer, or a typed error and
// why ("WHAT failed: WHY", or "WHAT was not run in time: WHY" when it was
// never sent). `warning` names a replica shortfall ("WHAT done, but ...")
// for the caller to log: the write took effect all the same.
struct IntegerAnswer {
  std::error_code error;
  long long value = 0;
  std::string why;
  std::string warning;
};
IntegerAnswer read_integer_answer(const Response& response, std::string_view what);

}  // namespace warden::detail
