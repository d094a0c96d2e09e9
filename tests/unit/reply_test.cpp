// Classifying replies: a reply of the wrong type is a protocol error, never
// read as a yes or a no; error replies map to their warden::errc.
#include <gtest/gtest.h>

#include <warden/error.hpp>

#include "io/reply.hpp"

namespace {

using warden::errc;
using warden::detail::Reply;

Reply status(const char* text) {
  Reply r;
  r.type = Reply::kind::status;
  r.str = text;
  return r;
}

TEST(ReplyProblem, ExpectedKindsPass) {
  EXPECT_FALSE(warden::detail::reply_problem(Reply{}, {Reply::kind::nil, Reply::kind::integer}));
  EXPECT_FALSE(warden::detail::reply_problem(Reply::make_integer(1), {Reply::kind::nil, Reply::kind::integer}));
}

TEST(ReplyProblem, AStatusWhereAnIntegerIsExpectedIsAProtocolError) {
  // A peer answering +OK to a release or a force-unlock: neither "released"
  // nor "not the owner".
  EXPECT_EQ(warden::detail::reply_problem(status("OK"), {Reply::kind::integer}), errc::protocol_error);
  EXPECT_EQ(warden::detail::reply_problem(status("OK"), {Reply::kind::nil, Reply::kind::integer}), errc::protocol_error);
  EXPECT_EQ(warden::detail::reply_problem(Reply::make_string("1"), {Reply::kind::integer}), errc::protocol_error);
  Reply array;
  array.type = Reply::kind::array;
  EXPECT_EQ(warden::detail::reply_problem(array, {Reply::kind::nil, Reply::kind::integer}), errc::protocol_error);
  auto why = warden::detail::describe_problem(status("OK"), {Reply::kind::integer});
  EXPECT_NE(why.find("status"), std::string::npos) << why;
  EXPECT_NE(why.find("integer"), std::string::npos) << why;
}

TEST(ReplyProblem, ErrorRepliesMapToTheirCause) {
  using warden::detail::reply_problem;
  auto wrongtype = Reply::make_error("WRONGTYPE Operation against a key holding the wrong kind of value");
  EXPECT_EQ(reply_problem(wrongtype, {Reply::kind::integer}), errc::wrong_type);
  EXPECT_EQ(reply_problem(Reply::make_error("WARDEN_WRONG_TYPE the key is a string that is not a lock"),
                          {Reply::kind::integer}),
            errc::wrong_type);
  EXPECT_EQ(reply_problem(Reply::make_error("NOAUTH Authentication required."), {Reply::kind::integer}),
            errc::authentication_failed);
  EXPECT_EQ(reply_problem(Reply::make_error("NOPERM this user has no permissions"), {Reply::kind::integer}),
            errc::server_error);
  EXPECT_EQ(warden::detail::describe_problem(Reply::make_error("WARDEN_WRONG_TYPE the key is a list"), {}),
            "the key is a list");
}

}  // namespace
