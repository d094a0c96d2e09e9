#include "io/reply.hpp"

#include <cctype>

#include <fmt/format.h>

#include <warden/error.hpp>

#include <string_view>

namespace warden::detail {

namespace {

// The error code: the first word of an error reply.
std::string_view code_of(const Reply& reply) {
  std::string_view text = reply.str;
  return text.substr(0, text.find(' '));
}

bool read_number(std::string_view text, unsigned long limit, unsigned long& out) {
  if (text.empty() || text.size() > 5) return false;
  unsigned long value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<unsigned long>(c - '0');
  }
  if (value > limit) return false;
  out = value;
  return true;
}

}  // namespace

std::optional<Redirect> redirect_of(const Reply& reply) {
  if (!reply.is_error()) return std::nullopt;
  auto code = code_of(reply);
  if (code != "MOVED" && code != "ASK") return std::nullopt;
  // "MOVED 3999 127.0.0.1:6381": exactly a slot and an address.
  std::string_view rest = std::string_view(reply.str).substr(code.size());
  if (rest.empty() || rest.front() != ' ') return std::nullopt;
  rest.remove_prefix(1);
  auto space = rest.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  auto address = rest.substr(space + 1);
  auto colon = address.rfind(':');
  unsigned long slot = 0;
  unsigned long port = 0;
  if (colon == std::string_view::npos || address.find(' ') != std::string_view::npos ||
      !read_number(rest.substr(0, space), 16383, slot) || !read_number(address.substr(colon + 1), 65535, port) ||
      port == 0) {
    return std::nullopt;
  }
  return Redirect{static_cast<std::uint16_t>(slot), std::string(address.substr(0, colon)),
                  static_cast<std::uint16_t>(port)};
}

reply_class classify(const Reply& reply) {
  if (!reply.is_error()) return reply_class::ok;
  auto code = code_of(reply);
  if (code == "LOADING") return reply_class::did_not_run_loading;
  if (code == "BUSY") return reply_class::did_not_run_busy;
  if (code == "MASTERDOWN") return reply_class::did_not_run_masterdown;
  if (code == "TRYAGAIN") return reply_class::did_not_run_tryagain;
  if (code == "CLUSTERDOWN") return reply_class::did_not_run_clusterdown;
  if (code == "NOSCRIPT") return reply_class::did_not_run_noscript;
  if (code == "WRONGTYPE" || code == "WARDEN_WRONG_TYPE") return reply_class::wrong_type;
  if (code == "WARDEN_WOULD_DEADLOCK") return reply_class::would_deadlock;
  if (code == "NOAUTH") return reply_class::auth_required;
  if (code == "WRONGPASS") return reply_class::auth_refused;
  if (code == "NOPERM") return reply_class::no_permission;
  if (code == "READONLY") return reply_class::readonly;
  if (code == "MOVED" || code == "ASK") {
    if (!redirect_of(reply)) return reply_class::other_error;
    return code == "MOVED" ? reply_class::moved : reply_class::ask;
  }
  return reply_class::other_error;
}

std::string_view error_detail(const Reply& reply) {
  if (!reply.is_error()) return {};
  std::string_view text = reply.str;
  text.remove_prefix(code_of(reply).size());
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  return text;
}

bool did_not_run(reply_class kind) {
  switch (kind) {
    case reply_class::did_not_run_loading:
    case reply_class::did_not_run_busy:
    case reply_class::did_not_run_masterdown:
    case reply_class::did_not_run_tryagain:
    case reply_class::did_not_run_clusterdown:
    case reply_class::did_not_run_noscript:
      return true;
    default:
      return false;
  }
}

bool did_not_run(const Reply& reply) { return did_not_run(classify(reply)); }

bool Response::outcome_unknown() const {
  return !not_run && (error == errc::connection_lost || error == errc::timed_out);
}

std::string describe_error(const Response& response) {
  std::string text = response.error.message();
  if (response.detail.empty()) return text;
  // A cause that starts by saying the same ("connection refused" and
  // "connection refused (ECONNREFUSED)") is said once.
  auto lower = [](std::string_view in) {
    std::string out(in);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  if (lower(response.detail).rfind(lower(text), 0) == 0) return response.detail;
  return text + ": " + response.detail;
}

namespace {

const char* kind_name(Reply::kind kind) {
  switch (kind) {
    case Reply::kind::nil:
      return "nil";
    case Reply::kind::string:
      return "bulk string";
    case Reply::kind::status:
      return "status";
    case Reply::kind::error:
      return "error";
    case Reply::kind::integer:
      return "integer";
    case Reply::kind::array:
      return "array";
  }
  return "unknown";
}

}  // namespace

std::error_code error_reply_code(const Reply& reply) {
  // Redis 7 passes an error raised inside a script on with nothing in front,
  // so a script's own code is the first word as Redis's are.
  switch (classify(reply)) {
    case reply_class::wrong_type:
      return make_error_code(errc::wrong_type);
    case reply_class::auth_required:
    case reply_class::auth_refused:
      return make_error_code(errc::authentication_failed);
    default:
      return make_error_code(errc::server_error);
  }
}

SetupRefusal describe_auth_refusal(std::string_view command, const Reply& reply, bool with_username) {
  const std::string& text = reply.str;
  auto kind = classify(reply);
  // Servers before ACLs (Redis 5) refused a password with a plain ERR and
  // these words.
  bool wrong_password =
      kind == reply_class::auth_refused || text.find("invalid username-password") != std::string::npos;
  // A password the server does not want is as permanent as a wrong one: the
  // configuration disagrees with the server's, and retrying cannot help.
  // Redis 6 and later, then Redis 5's words.
  bool unneeded_password = text.find("without any password configured") != std::string::npos ||
                           text.find("no password is set") != std::string::npos;
  bool refused = command == "SELECT" || wrong_password || unneeded_password || kind == reply_class::auth_required ||
                 kind == reply_class::no_permission || text.find("invalid password") != std::string::npos;
  std::string why;
  if (wrong_password) {
    why = with_username ? "wrong password, or no such user (or it is disabled)" : "wrong password";
  } else if (kind == reply_class::auth_required) {
    why = "the server requires a password and none was configured";
  } else if (unneeded_password) {
    why = "a password was configured but the server requires none";
  } else if (kind == reply_class::no_permission) {
    why = "the user may not run this command";
  }
  return SetupRefusal{make_error_code(refused ? errc::authentication_failed : errc::connection_refused),
                      std::string(command) + " failed: " + (why.empty() ? text : why + " (" + text + ")")};
}

std::error_code reply_problem(const Reply& reply, std::initializer_list<Reply::kind> expected) {
  if (reply.is_error()) return error_reply_code(reply);
  for (auto kind : expected) {
    if (reply.type == kind) return {};
  }
  return make_error_code(errc::protocol_error);
}

std::string describe_problem(const Reply& reply, std::initializer_list<Reply::kind> expected) {
  if (reply.is_error()) {
    // A script's own wrong-type message is written for users; the code adds nothing.
    if (code_of(reply) == "WARDEN_WRONG_TYPE" && reply.str.size() > code_of(reply).size()) {
      return std::string(error_detail(reply));
    }
    if (classify(reply) == reply_class::auth_required) {
      return "the server requires a password and none was accepted: " + reply.str;
    }
    return reply.str;
  }
  std::string out = "unexpected reply: a ";
  out += kind_name(reply.type);
  out += " where ";
  bool first = true;
  for (auto kind : expected) {
    if (!first) out += " or ";
    out += kind_name(kind);
    first = false;
  }
  out += " was expected";
  if (reply.type == Reply::kind::status || reply.type == Reply::kind::string)
    out += " ('" + reply.str.substr(0, 64) + "')";
  return out;
}

IntegerAnswer read_integer_answer(const Response& response, std::string_view what) {
  IntegerAnswer answer;
  if (response.error) {
    answer.error = response.error;
    answer.why = response.not_run && !response.unsent
                     ? fmt::format("{} was not run in time: {}", what, response.reply.str)
                     : fmt::format("{} failed: {}", what, describe_error(response));
  } else if ((answer.error = reply_problem(response.reply, {Reply::kind::integer}))) {
    answer.why = fmt::format("{} failed: {}", what, describe_problem(response.reply, {Reply::kind::integer}));
  } else {
    answer.value = response.reply.integer;
    if (!response.replica_shortfall.empty())
      answer.warning = fmt::format("{} done, but {}", what, response.replica_shortfall);
  }
  return answer;
}

}  // namespace warden::detail
