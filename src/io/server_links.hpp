// One server's two links as the code above the router uses them: the
// subscriber a lock's waiters join, and the command connection whose state
// explains a failure. The topology's Node is one; the layers above hold it
// through this, so they need not know how commands are routed.
#pragma once

#include <string_view>

#include "io/connection.hpp"
#include "io/pubsub.hpp"

namespace warden::detail {

class ServerLinks {
 public:
  // The subscriber connection, made on first use.
  virtual PubSub& pubsub() = 0;
  // Whether `channel` is confirmed subscribed on the subscriber connection;
  // false (and none is made) when there is none yet.
  virtual bool subscribed(std::string_view channel) const = 0;
  virtual Connection& commands() = 0;

 protected:
  ~ServerLinks() = default;
};

}  // namespace warden::detail
