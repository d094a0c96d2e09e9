// LinkProtocol: the wire protocol of one connection, fed bytes by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/link_protocol.hpp"

namespace {

using warden::detail::LinkProtocol;
using warden::detail::Push;
using warden::detail::push_kind;
using warden::detail::Reply;
using Event = LinkProtocol::Event;

std::vector<Event> feed(LinkProtocol& protocol, const std::string& bytes) {
  std::vector<Event> events;
  EXPECT_TRUE(protocol.feed(bytes.data(), bytes.size(), events)) << protocol.error_text();
  return events;
}

TEST(LinkProtocol, EncodesCommandsAsRespArraysOfBulkStrings) {
  LinkProtocol protocol;
  std::string out;
  protocol.encode(1, {"SET", "k", std::string("a\0b", 3)}, out);
  EXPECT_EQ(out, std::string("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\na\0b\r\n", 29));
  EXPECT_EQ(protocol.in_flight(), 1u);
}

TEST(LinkProtocol, TellsATlsRecordFromAReply) {
  // An alert (21) and a handshake (22) record of TLS 1.x, as a TLS server
  // may answer plaintext.
  const std::string alert("\x15\x03\x03\x00\x02\x02\x46", 7);
  const std::string handshake("\x16\x03\x01\x00\x05", 5);
  EXPECT_TRUE(LinkProtocol::starts_tls_record(alert.data(), alert.size()));
  EXPECT_TRUE(LinkProtocol::starts_tls_record(handshake.data(), handshake.size()));
  for (std::string reply : {"+OK\r\n", "-ERR x\r\n", ":1\r\n", "$-1\r\n", "*0\r\n"}) {
    EXPECT_FALSE(LinkProtocol::starts_tls_record(reply.data(), reply.size())) << reply;
  }
  EXPECT_FALSE(LinkProtocol::starts_tls_record(alert.data(), 1)) << "one byte tells nothing";
  const std::string other_version("\x15\x02", 2);
  EXPECT_FALSE(LinkProtocol::starts_tls_record(other_version.data(), other_version.size()));
  // And such bytes are no reply: the parser refuses them.
  LinkProtocol protocol;
  std::string out;
  protocol.encode(1, {"PING"}, out);
  std::vector<Event> events;
  EXPECT_FALSE(protocol.feed(alert.data(), alert.size(), events));
}

TEST(LinkProtocol, RepliesAreMatchedToCommandsInOrder) {
  LinkProtocol protocol;
  std::string out;
  protocol.encode(7, {"GET", "a"}, out);
  protocol.encode(9, {"INCR", "b"}, out);
  protocol.encode(4, {"PING"}, out);
  auto events = feed(protocol, "$1\r\nx\r\n:42\r\n+PONG\r\n");
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].id, 7u);
  EXPECT_EQ(events[0].reply.str, "x");
  EXPECT_EQ(events[1].id, 9u);
  EXPECT_EQ(events[1].reply.integer, 42);
  EXPECT_EQ(events[2].id, 4u);
  EXPECT_EQ(events[2].reply.type, Reply::kind::status);
  EXPECT_EQ(protocol.in_flight(), 0u);
}

TEST(LinkProtocol, AReplySplitAcrossReadsCompletesOnTheLastByte) {
  LinkProtocol protocol;
  std::string out;
  protocol.encode(1, {"GET", "a"}, out);
  std::string reply = "$11\r\nhello world\r\n";
  for (std::size_t i = 0; i + 1 < reply.size(); ++i) {
    EXPECT_TRUE(feed(protocol, reply.substr(i, 1)).empty()) << "completed early at byte " << i;
  }
  auto events = feed(protocol, reply.substr(reply.size() - 1));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].reply.str, "hello world");
}

TEST(LinkProtocol, ErrorRepliesGoToTheirCommand) {
  LinkProtocol protocol;
  std::string out;
  protocol.encode(3, {"EVALSHA", "x", "0"}, out);
  auto events = feed(protocol, "-NOSCRIPT No matching script\r\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].what, Event::type::reply);
  EXPECT_TRUE(events[0].reply.is_error());
  EXPECT_EQ(events[0].reply.str, "NOSCRIPT No matching script");
}

TEST(LinkProtocol, ACommandLinkNeverTakesAnArrayReplyForAPush) {
  // A script may return {"message", "ch", "text"}: on a link that never
  // subscribed it is a reply like any other.
  LinkProtocol protocol;
  std::string out;
  protocol.encode(5, {"EVAL", "...", "0"}, out);
  auto events = feed(protocol, "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$4\r\ntext\r\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].what, Event::type::reply);
  EXPECT_EQ(events[0].id, 5u);
  ASSERT_EQ(events[0].reply.elements.size(), 3u);
}

TEST(LinkProtocol, SubscribeIsConfirmedOncePerChannelThenMessagesArePushes) {
  LinkProtocol protocol;
  std::string out;
  ASSERT_TRUE(protocol.encode_subscription({"SUBSCRIBE", "a", "b"}, out));
  EXPECT_TRUE(protocol.subscribed_mode());
  auto events = feed(protocol,
                     "*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n"
                     "*3\r\n$9\r\nsubscribe\r\n$1\r\nb\r\n:2\r\n"
                     "*3\r\n$7\r\nmessage\r\n$1\r\na\r\n$1\r\n0\r\n");
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].push.kind, push_kind::subscribe);
  EXPECT_TRUE(events[0].push.solicited);
  EXPECT_EQ(events[0].push.channel, "a");
  EXPECT_EQ(events[1].push.count, 2);
  EXPECT_EQ(events[2].what, Event::type::push);
  EXPECT_EQ(events[2].push.kind, push_kind::message);
  EXPECT_EQ(events[2].push.channel, "a");
  EXPECT_EQ(events[2].push.payload, "0");
  EXPECT_EQ(protocol.in_flight(), 0u);
}

TEST(LinkProtocol, ShardChannelsAreConfirmedAndDeliveredByKind) {
  LinkProtocol protocol;
  std::string out;
  ASSERT_TRUE(protocol.encode_subscription({"SSUBSCRIBE", "{x}c"}, out));
  auto events = feed(protocol,
                     "*3\r\n$10\r\nssubscribe\r\n$4\r\n{x}c\r\n:1\r\n"
                     "*3\r\n$8\r\nsmessage\r\n$4\r\n{x}c\r\n$1\r\n1\r\n");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].push.kind, push_kind::ssubscribe);
  EXPECT_TRUE(events[0].push.solicited);
  EXPECT_EQ(events[1].push.kind, push_kind::smessage);
  EXPECT_EQ(events[1].push.payload, "1");
}

TEST(LinkProtocol, AnUnsolicitedShardUnsubscribeIsReportedAsSuch) {
  // When a slot moves, the server ends its shard channels' subscriptions on
  // its own: there is no SUNSUBSCRIBE in flight for it to confirm.
  LinkProtocol protocol;
  std::string out;
  ASSERT_TRUE(protocol.encode_subscription({"SSUBSCRIBE", "c"}, out));
  feed(protocol, "*3\r\n$10\r\nssubscribe\r\n$1\r\nc\r\n:1\r\n");
  protocol.encode(2, {"PING"}, out);
  auto events = feed(protocol, "*3\r\n$12\r\nsunsubscribe\r\n$1\r\nc\r\n:0\r\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].push.kind, push_kind::sunsubscribe);
  EXPECT_FALSE(events[0].push.solicited);
  EXPECT_EQ(protocol.in_flight(), 1u) << "the PING still waits for its reply";
}

TEST(LinkProtocol, AnUnsubscribeWeSentIsConfirmedAsSolicited) {
  LinkProtocol protocol;
  std::string out;
  ASSERT_TRUE(protocol.encode_subscription({"SUBSCRIBE", "c"}, out));
  feed(protocol, "*3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n");
  ASSERT_TRUE(protocol.encode_subscription({"UNSUBSCRIBE", "c"}, out));
  auto events = feed(protocol, "*3\r\n$11\r\nunsubscribe\r\n$1\r\nc\r\n:0\r\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].push.kind, push_kind::unsubscribe);
  EXPECT_TRUE(events[0].push.solicited);
  EXPECT_EQ(protocol.in_flight(), 0u);
}

TEST(LinkProtocol, PingWhileSubscribedIsMatchedToThePing) {
  LinkProtocol protocol;
  std::string out;
  ASSERT_TRUE(protocol.encode_subscription({"SUBSCRIBE", "c"}, out));
  protocol.encode(11, {"PING"}, out);
  auto events = feed(protocol,
                     "*3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n"
                     "*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\n0\r\n"
                     "*2\r\n$4\r\npong\r\n$0\r\n\r\n");
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[1].push.kind, push_kind::message) << "a message between the two is still a push";
  EXPECT_EQ(events[2].what, Event::type::reply);
  EXPECT_EQ(events[2].id, 11u);
  EXPECT_EQ(protocol.in_flight(), 0u);
}

TEST(LinkProtocol, ARefusedSubscriptionIsOnePushAndFreesItsPlace) {
  LinkProtocol protocol;
  std::string out;
  ASSERT_TRUE(protocol.encode_subscription({"SUBSCRIBE", "a", "b"}, out));
  protocol.encode(2, {"PING"}, out);
  auto events = feed(protocol, "-NOPERM this user has no permissions to access one of the channels\r\n+PONG\r\n");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].what, Event::type::push);
  EXPECT_EQ(events[0].push.kind, push_kind::refused);
  EXPECT_NE(events[0].push.error.find("NOPERM"), std::string::npos);
  EXPECT_EQ(events[1].what, Event::type::reply);
  EXPECT_EQ(events[1].id, 2u);
}

TEST(LinkProtocol, OnlySubscriptionCommandsWithChannelsAreAccepted) {
  LinkProtocol protocol;
  std::string out;
  EXPECT_FALSE(protocol.encode_subscription({"UNSUBSCRIBE"}, out));
  EXPECT_FALSE(protocol.encode_subscription({"PSUBSCRIBE", "a*"}, out));
  EXPECT_FALSE(protocol.encode_subscription({"GET", "a"}, out));
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(protocol.encode_subscription({"ssubscribe", "a"}, out)) << "command names are case-insensitive";
}

TEST(LinkProtocol, BytesThatAreNotRespAreAnError) {
  LinkProtocol protocol;
  std::string out;
  protocol.encode(1, {"PING"}, out);
  std::vector<Event> events;
  std::string garbage = "HTTP/1.1 400 Bad Request\r\n";
  EXPECT_FALSE(protocol.feed(garbage.data(), garbage.size(), events));
  EXPECT_FALSE(protocol.error_text().empty());
}

TEST(LinkProtocol, AReplyWithNoCommandInFlightIsAnError) {
  LinkProtocol protocol;
  std::vector<Event> events;
  std::string reply = "+OK\r\n";
  EXPECT_FALSE(protocol.feed(reply.data(), reply.size(), events));
  EXPECT_NE(protocol.error_text().find("no command in flight"), std::string::npos);
}

TEST(LinkProtocol, ResetReturnsTheCommandsInFlightOldestFirstAndStartsAfresh) {
  LinkProtocol protocol;
  std::string out;
  protocol.encode(1, {"GET", "a"}, out);
  ASSERT_TRUE(protocol.encode_subscription({"SUBSCRIBE", "c"}, out));
  protocol.encode(2, {"GET", "b"}, out);
  feed(protocol, "$1\r");  // half a reply
  EXPECT_EQ(protocol.reset(), (std::vector<std::uint64_t>{1, 2}));
  EXPECT_EQ(protocol.in_flight(), 0u);
  EXPECT_FALSE(protocol.subscribed_mode());
  // The half reply is forgotten: the next connection's first reply parses.
  protocol.encode(3, {"PING"}, out);
  auto events = feed(protocol, "+PONG\r\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].id, 3u);
}

}  // namespace
