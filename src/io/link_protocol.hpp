// The wire protocol of one connection, free of I/O: commands are encoded
// into an output buffer (RESP2, hiredis's redisFormatCommandArgv), bytes read
// are parsed (hiredis's redisReader), and every reply is either matched to the
// command it answers, in order, or reported as a push.
//
// RESP2 cannot mark a push as such: a reply that looks like ["message", ...]
// is a push only on a link that has subscribed. So a link that never sent a
// subscription command never mistakes a command's array reply for a push,
// and one that did sends nothing but PING besides, whose reply while
// subscribed is ["pong", ""] and is matched to the PING in order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "io/reply.hpp"
#include "io/reply_reader.hpp"

struct redisReader;

namespace warden::detail {

enum class push_kind {
  message,    // a message published on a channel this link subscribed to
  smessage,   // ... on a shard channel (SSUBSCRIBE, Redis 7)
  subscribe,  // the server confirmed a subscription
  ssubscribe,
  unsubscribe,   // the server ended a subscription: confirming our UNSUBSCRIBE,
  sunsubscribe,  // or on its own (a shard channel's slot moved away)
  refused,       // the server answered a subscription command with an error
};

struct Push {
  push_kind kind = push_kind::message;
  // False when the server sent it on its own rather than in answer to a
  // command of this link: only (s)unsubscribe can be unsolicited.
  bool solicited = true;
  std::string channel;
  std::string payload;  // message, smessage
  long long count = 0;  // (s)subscribe, (s)unsubscribe: subscriptions left
  std::string error;    // refused: the server's error text
};

class LinkProtocol {
 public:
  struct Event {
    enum class type { reply, push };
    type what = type::reply;
    std::uint64_t id = 0;  // reply: the command it answers
    Reply reply;           // reply
    Push push;             // push
  };

  LinkProtocol();
  ~LinkProtocol();
  LinkProtocol(const LinkProtocol&) = delete;
  LinkProtocol& operator=(const LinkProtocol&) = delete;

  // A command that gets exactly one reply, appended to `out` and expected
  // back under `id`.
  void encode(std::uint64_t id, const std::vector<std::string>& argv, std::string& out);
  // The same in two steps: a command's bytes, appended to `out`, and bytes
  // so made sent as one command (they may be sent again after a reconnect
  // without encoding the command anew).
  static void encode_command(const std::vector<std::string>& argv, std::string& out);
  void send_encoded(std::uint64_t id, std::string_view command, std::string& out);

  // SUBSCRIBE, SSUBSCRIBE, UNSUBSCRIBE or SUNSUBSCRIBE with at least one
  // channel. Its answers come back as pushes: one confirmation per channel,
  // or a single `refused`. Returns false (and encodes nothing) for any other
  // command or without a channel.
  bool encode_subscription(const std::vector<std::string>& argv, std::string& out);

  // Parses bytes read from the connection and appends what they complete, in
  // order. Returns false on bytes that are not RESP, or a reply nobody asked
  // for; error_text() says which. The link must then be dropped.
  bool feed(const char* data, std::size_t size, std::vector<Event>& events);

  // The connection is gone: returns the ids of the commands in flight,
  // oldest first, and starts afresh (parser, subscriptions).
  std::vector<std::uint64_t> reset();

  // Whether `data`, the first bytes a server sent, begin a TLS record: a
  // content type (20 to 23: an alert, a handshake...) and major version 3.
  // No RESP reply starts so; a TLS server answering plaintext may.
  static bool starts_tls_record(const char* data, std::size_t size);

  std::size_t in_flight() const { return in_flight_.size(); }
  // Whether the link has subscribed since the last reset.
  bool subscribed_mode() const { return subscribed_mode_; }
  const std::string& error_text() const { return error_; }

 private:
  enum class family { none, classic, shard };
  struct Pending {
    std::uint64_t id = 0;  // a command's id; 0 for a subscription command
    family subscription = family::none;
    bool subscribing = false;       // (S)SUBSCRIBE rather than (S)UNSUBSCRIBE
    std::size_t confirmations = 0;  // still expected
  };

  bool dispatch(Reply&& reply, std::vector<Event>& events);
  bool as_push(const Reply& reply, std::vector<Event>& events);
  void release_spare_buffer();
  void push_in_flight(const Pending& pending);
  void pop_in_flight();

  ReaderPtr reader_;
  std::deque<Pending> in_flight_;
  std::size_t in_flight_peak_ = 0;  // its largest size since it was last replaced
  bool subscribed_mode_ = false;
  std::string error_;
};

}  // namespace warden::detail
