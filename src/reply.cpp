#include "reply.hpp"

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

}  // namespace warden::detail
