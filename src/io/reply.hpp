// A Redis reply copied out of hiredis, so protocol logic can be written and
// tested against plain values.
#pragma once

#include <initializer_list>
#include <string>
#include <system_error>
#include <vector>

struct redisReply;

namespace warden::detail {

struct Reply {
  enum class kind { nil, string, status, error, integer, array };

  kind type = kind::nil;
  std::string str;        // string, status and error text
  long long integer = 0;
  std::vector<Reply> elements;

  static Reply from(const redisReply* reply);
  static Reply make_integer(long long value) { Reply r; r.type = kind::integer; r.integer = value; return r; }
  static Reply make_string(std::string value) { Reply r; r.type = kind::string; r.str = std::move(value); return r; }
  static Reply make_error(std::string value) { Reply r; r.type = kind::error; r.str = std::move(value); return r; }

  bool is_nil() const { return type == kind::nil; }
  bool is_error() const { return type == kind::error; }
  bool is_integer() const { return type == kind::integer; }
};

// Whether an error reply means the server refused the command before running
// any of it: the server is loading its data set (LOADING), busy with a long
// script (BUSY), a replica that lost its master (MASTERDOWN), a cluster slot
// in flux (TRYAGAIN, CLUSTERDOWN), or it does not know the script (NOSCRIPT).
// Sending the same command again is then safe, even one that is not idempotent.
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
  // A transport error's cause in words, when the link knows it (why the
  // connection could not be made or was lost: "connect timed out after
  // 1000 ms", a TLS verification failure, ...).
  std::string detail = {};

  bool ok() const { return !error && !reply.is_error(); }
  // The command may or may not have taken effect: its reply was lost.
  bool outcome_unknown() const;
};

// A transport error for messages: the error's own text, then its cause when
// known ("TLS certificate verification failed: the server's certificate ...").
std::string describe_error(const Response& response);

// The warden::errc an error reply stands for: WRONGTYPE (from Redis) and
// WARDEN_WRONG_TYPE (from a script's own check) are errc::wrong_type, NOAUTH
// is errc::authentication_failed, anything else errc::server_error.
std::error_code error_reply_code(const Reply& reply);

// Checks that `reply` is of one of the `expected` kinds. Returns {} if so,
// error_reply_code() for an error reply, and errc::protocol_error for a reply
// of another kind (a peer answering +OK where a script returns an integer is
// not the server warden was written for: its answer must not be read as a
// yes or a no).
std::error_code reply_problem(const Reply& reply, std::initializer_list<Reply::kind> expected);

// A readable description of `reply`'s problem, for error messages.
std::string describe_problem(const Reply& reply, std::initializer_list<Reply::kind> expected);

}  // namespace warden::detail
