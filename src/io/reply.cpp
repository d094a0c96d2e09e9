#include "io/reply.hpp"

#include <hiredis/hiredis.h>

#include <warden/error.hpp>

namespace warden::detail {

Reply Reply::from(const redisReply* reply) {
  Reply out;
  if (reply == nullptr) return out;
  switch (reply->type) {
    case REDIS_REPLY_STRING:
      out.type = kind::string;
      out.str.assign(reply->str, reply->len);
      break;
    case REDIS_REPLY_STATUS:
      out.type = kind::status;
      out.str.assign(reply->str, reply->len);
      break;
    case REDIS_REPLY_ERROR:
      out.type = kind::error;
      out.str.assign(reply->str, reply->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = kind::integer;
      out.integer = reply->integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = kind::array;
      out.elements.reserve(reply->elements);
      for (std::size_t i = 0; i < reply->elements; ++i) out.elements.push_back(from(reply->element[i]));
      break;
    default:
      out.type = kind::nil;
  }
  return out;
}

bool did_not_run(const Reply& reply) {
  if (!reply.is_error()) return false;
  // The first word of the error is its code; compare whole words so that, say,
  // BUSYKEY is not taken for BUSY.
  auto end = reply.str.find(' ');
  auto code = reply.str.substr(0, end);
  return code == "LOADING" || code == "BUSY" || code == "MASTERDOWN" || code == "TRYAGAIN" ||
         code == "CLUSTERDOWN" || code == "NOSCRIPT";
}

bool Response::outcome_unknown() const {
  return !not_run && (error == errc::connection_lost || error == errc::timed_out);
}

std::string describe_error(const Response& response) {
  std::string text = response.error.message();
  if (!response.detail.empty()) text += ": " + response.detail;
  return text;
}

namespace {

bool starts_with(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

const char* kind_name(Reply::kind kind) {
  switch (kind) {
    case Reply::kind::nil: return "nil";
    case Reply::kind::string: return "bulk string";
    case Reply::kind::status: return "status";
    case Reply::kind::error: return "error";
    case Reply::kind::integer: return "integer";
    case Reply::kind::array: return "array";
  }
  return "unknown";
}

}  // namespace

std::error_code error_reply_code(const Reply& reply) {
  // Redis 7 may prefix an error raised inside a script with nothing else, so
  // the code is the first word.
  if (starts_with(reply.str, "WRONGTYPE") || starts_with(reply.str, "WARDEN_WRONG_TYPE")) {
    return make_error_code(errc::wrong_type);
  }
  if (starts_with(reply.str, "NOAUTH") || starts_with(reply.str, "WRONGPASS")) {
    return make_error_code(errc::authentication_failed);
  }
  return make_error_code(errc::server_error);
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
    if (starts_with(reply.str, "WARDEN_WRONG_TYPE ")) return reply.str.substr(std::string("WARDEN_WRONG_TYPE ").size());
    if (starts_with(reply.str, "NOAUTH")) return "the server requires a password and none was accepted: " + reply.str;
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
  if (reply.type == Reply::kind::status || reply.type == Reply::kind::string) out += " ('" + reply.str.substr(0, 64) + "')";
  return out;
}

}  // namespace warden::detail
