// The reader that parses RESP into Reply values (hiredis parses; warden's
// functions build the values), fed bytes by hand.
#include <gtest/gtest.h>

#include <hiredis/hiredis.h>

#include <memory>
#include <string>

#include "io/reply.hpp"
#include "io/reply_reader.hpp"

namespace {

using warden::detail::make_reply_reader;
using warden::detail::Reply;
using warden::detail::take_reply;

// Feeds `bytes` in pieces of `step` and returns the first complete reply, or
// null when the bytes hold none. Fails the test on a protocol error.
std::unique_ptr<Reply> read_one(const std::string& bytes, std::size_t step = 1 << 20) {
  auto reader = make_reply_reader();
  for (std::size_t at = 0; at < bytes.size(); at += step) {
    EXPECT_EQ(redisReaderFeed(reader.get(), bytes.data() + at, std::min(step, bytes.size() - at)), REDIS_OK);
    void* raw = nullptr;
    EXPECT_EQ(redisReaderGetReply(reader.get(), &raw), REDIS_OK) << reader->errstr;
    if (raw != nullptr) return take_reply(raw);
  }
  return nullptr;
}

TEST(ReplyReader, ScalarsKeepTheirKindAndValue) {
  auto status = read_one("+OK\r\n");
  ASSERT_TRUE(status);
  EXPECT_EQ(status->type, Reply::kind::status);
  EXPECT_EQ(status->str, "OK");

  auto error = read_one("-ERR no such key\r\n");
  ASSERT_TRUE(error);
  EXPECT_TRUE(error->is_error());
  EXPECT_EQ(error->str, "ERR no such key");

  auto integer = read_one(":-42\r\n");
  ASSERT_TRUE(integer);
  EXPECT_TRUE(integer->is_integer());
  EXPECT_EQ(integer->integer, -42);

  auto bulk = read_one(std::string("$3\r\na\0b\r\n", 9));
  ASSERT_TRUE(bulk);
  EXPECT_EQ(bulk->type, Reply::kind::string);
  EXPECT_EQ(bulk->str, std::string("a\0b", 3));

  auto nil = read_one("$-1\r\n");
  ASSERT_TRUE(nil);
  EXPECT_TRUE(nil->is_nil());
  auto nil_array = read_one("*-1\r\n");
  ASSERT_TRUE(nil_array);
  EXPECT_TRUE(nil_array->is_nil());
}

TEST(ReplyReader, NestedArraysAreBuiltInOrderEvenFedByteByByte) {
  const std::string bytes = "*4\r\n:1\r\n*2\r\n$1\r\na\r\n*1\r\n$-1\r\n*0\r\n-WRONGTYPE x\r\n";
  for (std::size_t step : {std::size_t{1}, std::size_t{3}, bytes.size()}) {
    auto reply = read_one(bytes, step);
    ASSERT_TRUE(reply) << "step " << step;
    ASSERT_EQ(reply->type, Reply::kind::array);
    ASSERT_EQ(reply->elements.size(), 4u);
    EXPECT_EQ(reply->elements[0].integer, 1);
    const Reply& inner = reply->elements[1];
    ASSERT_EQ(inner.elements.size(), 2u);
    EXPECT_EQ(inner.elements[0].str, "a");
    ASSERT_EQ(inner.elements[1].elements.size(), 1u);
    EXPECT_TRUE(inner.elements[1].elements[0].is_nil());
    EXPECT_EQ(reply->elements[2].type, Reply::kind::array);
    EXPECT_TRUE(reply->elements[2].elements.empty());
    EXPECT_TRUE(reply->elements[3].is_error());
  }
}

TEST(ReplyReader, AnArrayLongerThanItsFirstReservationKeepsEveryElement) {
  // More elements than are reserved up front, with nested arrays among them:
  // growing the vector must not lose or reorder anything.
  const int count = 10'000;
  std::string bytes = "*" + std::to_string(count) + "\r\n";
  for (int i = 0; i < count; ++i)
    bytes += i % 1000 == 0 ? "*1\r\n:" + std::to_string(i) + "\r\n" : ":" + std::to_string(i) + "\r\n";
  auto reply = read_one(bytes, 4096);
  ASSERT_TRUE(reply);
  ASSERT_EQ(reply->elements.size(), static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    const Reply& element = reply->elements[static_cast<std::size_t>(i)];
    if (i % 1000 == 0) {
      ASSERT_EQ(element.elements.size(), 1u) << i;
      EXPECT_EQ(element.elements[0].integer, i);
    } else {
      EXPECT_EQ(element.integer, i);
    }
  }
}

TEST(ReplyReader, AHugeAnnouncedArrayAllocatesNothingUntilItsElementsCome) {
  // A broken or hostile server announcing two billion elements: the reader
  // waits for them instead of failing or taking gigabytes.
  EXPECT_FALSE(read_one("*2000000000\r\n:1\r\n:2\r\n"));
}

TEST(ReplyReader, AProtocolErrorMidArrayFreesWhatWasBuilt) {
  // Run under ASan/valgrind, this also checks the partial array is freed.
  auto reader = make_reply_reader();
  const std::string bytes = "*3\r\n:1\r\n$1\r\nx\r\n?bad\r\n";
  ASSERT_EQ(redisReaderFeed(reader.get(), bytes.data(), bytes.size()), REDIS_OK);
  void* raw = nullptr;
  EXPECT_EQ(redisReaderGetReply(reader.get(), &raw), REDIS_ERR);
  EXPECT_EQ(raw, nullptr);
}

TEST(ReplyReader, RepliesFollowingEachOtherComeOneAtATime) {
  auto reader = make_reply_reader();
  const std::string bytes = ":1\r\n*1\r\n:2\r\n+PONG\r\n";
  ASSERT_EQ(redisReaderFeed(reader.get(), bytes.data(), bytes.size()), REDIS_OK);
  std::vector<std::unique_ptr<Reply>> got;
  for (;;) {
    void* raw = nullptr;
    ASSERT_EQ(redisReaderGetReply(reader.get(), &raw), REDIS_OK);
    if (raw == nullptr) break;
    got.push_back(take_reply(raw));
  }
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0]->integer, 1);
  EXPECT_EQ(got[1]->elements.at(0).integer, 2);
  EXPECT_EQ(got[2]->str, "PONG");
}

}  // namespace
