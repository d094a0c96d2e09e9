#include "io/link_protocol.hpp"

#include <hiredis/hiredis.h>
#include <hiredis/sds.h>

#include <algorithm>
#include <cctype>
#include <new>

namespace warden::detail {
namespace {

std::string upper(const std::string& text) {
  std::string out = text;
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::toupper(c); });
  return out;
}

void append_encoded(const std::vector<std::string>& argv, std::string& out) {
  // Kept from call to call: a renewal batch has a few hundred arguments.
  thread_local std::vector<const char*> parts;
  thread_local std::vector<std::size_t> lengths;
  parts.clear();
  lengths.clear();
  for (const auto& arg : argv) {
    parts.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  char* command = nullptr;
  int length = redisFormatCommandArgv(&command, static_cast<int>(argv.size()), parts.data(), lengths.data());
  if (length < 0 || command == nullptr) throw std::bad_alloc();
  out.append(command, static_cast<std::size_t>(length));
  redisFreeCommand(command);
}

}  // namespace

LinkProtocol::LinkProtocol() : reader_(make_reply_reader()) {}

LinkProtocol::~LinkProtocol() = default;

void LinkProtocol::push_in_flight(const Pending& pending) {
  in_flight_.push_back(pending);
  in_flight_peak_ = std::max(in_flight_peak_, in_flight_.size());
}

void LinkProtocol::pop_in_flight() {
  in_flight_.pop_front();
  // A deque keeps the index of its blocks at its largest: once a burst is
  // answered, a fresh one replaces it.
  constexpr std::size_t kept = 256;
  if (in_flight_.empty() && in_flight_peak_ > kept) {
    std::deque<Pending>().swap(in_flight_);
    in_flight_peak_ = 0;
  }
}

void LinkProtocol::release_spare_buffer() {
  // The parser's buffer grows to the largest read (a burst of replies) and
  // hiredis shrinks it only at the next read: a link that goes quiet after a
  // burst would keep it. Between replies, with every byte parsed, a fresh
  // parser costs less than the buffer.
  constexpr std::size_t kept_bytes = 16 * 1024;
  // Every byte read is parsed and no reply is half built (an aggregate in
  // progress is the parser's `reply`; a partial line or bulk leaves its
  // bytes unparsed).
  if (reader_->pos != reader_->len || reader_->reply != nullptr || sdsalloc(reader_->buf) <= kept_bytes) return;
  try {
    reader_ = make_reply_reader();
  } catch (const std::bad_alloc&) {
    // Keep the old one: it still works.
  }
}

void LinkProtocol::encode(std::uint64_t id, const std::vector<std::string>& argv, std::string& out) {
  append_encoded(argv, out);
  push_in_flight(Pending{id, family::none, false, 1});
}

void LinkProtocol::encode_command(const std::vector<std::string>& argv, std::string& out) { append_encoded(argv, out); }

void LinkProtocol::send_encoded(std::uint64_t id, std::string_view command, std::string& out) {
  out.append(command);
  push_in_flight(Pending{id, family::none, false, 1});
}

bool LinkProtocol::encode_subscription(const std::vector<std::string>& argv, std::string& out) {
  if (argv.size() < 2) return false;
  std::string name = upper(argv[0]);
  Pending pending;
  if (name == "SUBSCRIBE" || name == "UNSUBSCRIBE") {
    pending.subscription = family::classic;
  } else if (name == "SSUBSCRIBE" || name == "SUNSUBSCRIBE") {
    pending.subscription = family::shard;
  } else {
    return false;
  }
  pending.subscribing = name == "SUBSCRIBE" || name == "SSUBSCRIBE";
  pending.confirmations = argv.size() - 1;
  append_encoded(argv, out);
  push_in_flight(pending);
  subscribed_mode_ = true;
  return true;
}

bool LinkProtocol::feed(const char* data, std::size_t size, std::vector<Event>& events) {
  if (size > 0 && redisReaderFeed(reader_.get(), data, size) != REDIS_OK) {
    error_ = reader_->errstr;
    return false;
  }
  for (;;) {
    void* raw = nullptr;
    if (redisReaderGetReply(reader_.get(), &raw) != REDIS_OK) {
      error_ = std::string("not a Redis reply: ") + reader_->errstr;
      return false;
    }
    if (raw == nullptr) {  // incomplete: wait for more bytes
      release_spare_buffer();
      return true;
    }
    if (!dispatch(std::move(*take_reply(raw)), events)) return false;
  }
}

bool LinkProtocol::dispatch(Reply&& reply, std::vector<Event>& events) {
  if (subscribed_mode_ && reply.type == Reply::kind::array && as_push(reply, events)) return true;
  if (in_flight_.empty()) {
    error_ = "a reply arrived with no command in flight";
    return false;
  }
  Pending& head = in_flight_.front();
  if (head.subscription != family::none) {
    // A subscription command is answered by confirmations (pushes, above)
    // or, when refused as a whole, by one error.
    if (!reply.is_error()) {
      error_ = "unexpected reply to a subscription command";
      return false;
    }
    Event event;
    event.what = Event::type::push;
    event.push.kind = push_kind::refused;
    event.push.error = std::move(reply.str);
    pop_in_flight();
    events.push_back(std::move(event));
    return true;
  }
  Event event;
  event.what = Event::type::reply;
  event.id = head.id;
  event.reply = std::move(reply);
  pop_in_flight();
  events.push_back(std::move(event));
  return true;
}

bool LinkProtocol::as_push(const Reply& reply, std::vector<Event>& events) {
  if (reply.elements.size() != 3 || reply.elements[0].type != Reply::kind::string) return false;
  const std::string& kind = reply.elements[0].str;
  Push push;
  family confirms = family::none;
  bool subscribing = false;
  if (kind == "message" || kind == "smessage") {
    push.kind = kind == "message" ? push_kind::message : push_kind::smessage;
    push.channel = reply.elements[1].str;
    push.payload = reply.elements[2].str;
  } else if (kind == "subscribe" || kind == "unsubscribe") {
    push.kind = kind == "subscribe" ? push_kind::subscribe : push_kind::unsubscribe;
    confirms = family::classic;
    subscribing = kind == "subscribe";
  } else if (kind == "ssubscribe" || kind == "sunsubscribe") {
    push.kind = kind == "ssubscribe" ? push_kind::ssubscribe : push_kind::sunsubscribe;
    confirms = family::shard;
    subscribing = kind == "ssubscribe";
  } else {
    return false;  // e.g. ["pong", ""]: the reply to a PING, matched in order
  }
  if (confirms != family::none) {
    push.channel = reply.elements[1].str;
    push.count = reply.elements[2].integer;
    // A confirmation answers the oldest command in flight when that is a
    // subscription command of the same kind; anything else is the server
    // acting on its own (a shard channel's slot moved to another node).
    push.solicited = false;
    if (!in_flight_.empty()) {
      Pending& head = in_flight_.front();
      if (head.subscription == confirms && head.subscribing == subscribing) {
        push.solicited = true;
        if (--head.confirmations == 0) pop_in_flight();
      }
    }
  }
  Event event;
  event.what = Event::type::push;
  event.push = std::move(push);
  events.push_back(std::move(event));
  return true;
}

bool LinkProtocol::starts_tls_record(const char* data, std::size_t size) {
  if (size < 2) return false;
  auto type = static_cast<unsigned char>(data[0]);
  return type >= 20 && type <= 23 && static_cast<unsigned char>(data[1]) == 3;
}

std::vector<std::uint64_t> LinkProtocol::reset() {
  std::vector<std::uint64_t> ids;
  for (const auto& pending : in_flight_) {
    if (pending.subscription == family::none) ids.push_back(pending.id);
  }
  std::deque<Pending>().swap(in_flight_);
  in_flight_peak_ = 0;
  subscribed_mode_ = false;
  error_.clear();
  reader_ = make_reply_reader();
  return ids;
}

}  // namespace warden::detail
