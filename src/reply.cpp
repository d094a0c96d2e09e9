#include "reply.hpp"

#include <hiredis/hiredis.h>

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

}  // namespace warden::detail
