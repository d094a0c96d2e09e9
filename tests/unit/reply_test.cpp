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
  EXPECT_EQ(warden::detail::reply_problem(status("OK"), {Reply::kind::nil, Reply::kind::integer}),
            errc::protocol_error);
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

namespace {

using warden::detail::classify;
using warden::detail::reply_class;

TEST(ReplyClassify, EachCodeHasItsClass) {
  struct Case {
    const char* text;
    reply_class kind;
  };
  for (auto [text, kind] : {
           Case{"LOADING Redis is loading the dataset in memory", reply_class::did_not_run_loading},
           Case{"BUSY Redis is busy running a script.", reply_class::did_not_run_busy},
           Case{"MASTERDOWN Link with MASTER is down", reply_class::did_not_run_masterdown},
           Case{"TRYAGAIN Multiple keys request during rehashing of slot", reply_class::did_not_run_tryagain},
           Case{"CLUSTERDOWN The cluster is down", reply_class::did_not_run_clusterdown},
           Case{"NOSCRIPT No matching script. Please use EVAL.", reply_class::did_not_run_noscript},
           Case{"WRONGTYPE Operation against a key holding the wrong kind of value", reply_class::wrong_type},
           Case{"WARDEN_WRONG_TYPE the key is a list", reply_class::wrong_type},
           Case{"WARDEN_WOULD_DEADLOCK this thread holds the read lock", reply_class::would_deadlock},
           Case{"NOAUTH Authentication required.", reply_class::auth_required},
           Case{"WRONGPASS invalid username-password pair or user is disabled.", reply_class::auth_refused},
           Case{"NOPERM this user has no permissions to run the 'eval' command", reply_class::no_permission},
           Case{"READONLY You can't write against a read only replica.", reply_class::readonly},
           Case{"MOVED 3999 127.0.0.1:6381", reply_class::moved},
           Case{"ASK 3999 127.0.0.1:6381", reply_class::ask},
           Case{"ERR Error running script", reply_class::other_error},
           Case{"BUSYKEY Target key name already exists.", reply_class::other_error},
           Case{"", reply_class::other_error},
       }) {
    EXPECT_EQ(classify(Reply::make_error(text)), kind) << text;
  }
}

TEST(ReplyClassify, CodesAreWholeWords) {
  for (const char* text : {"LOADINGX", "WRONGTYPEX oops", "NOAUTHENTICATION", "MOVEDX 1 h:1", "NOPERMS"}) {
    EXPECT_EQ(classify(Reply::make_error(text)), reply_class::other_error) << text;
  }
  EXPECT_EQ(classify(Reply::make_error("BUSY")), reply_class::did_not_run_busy);
}

TEST(ReplyClassify, RepliesThatAreNotErrorsAreOk) {
  EXPECT_EQ(classify(Reply{}), reply_class::ok);
  EXPECT_EQ(classify(Reply::make_integer(1)), reply_class::ok);
  EXPECT_EQ(classify(Reply::make_string("MOVED 1 h:1")), reply_class::ok);
  EXPECT_EQ(classify(status("LOADING")), reply_class::ok);
}

TEST(ReplyClassify, DidNotRunIsExactlyTheRefusalsBeforeRunning) {
  using warden::detail::did_not_run;
  EXPECT_TRUE(did_not_run(reply_class::did_not_run_noscript));
  EXPECT_FALSE(did_not_run(reply_class::moved));
  EXPECT_FALSE(did_not_run(reply_class::ask));
  EXPECT_FALSE(did_not_run(reply_class::readonly));
  EXPECT_FALSE(did_not_run(reply_class::ok));
}

TEST(ReplyClassify, RedirectsCarryTheirSlotAndAddress) {
  using warden::detail::redirect_of;
  auto moved = redirect_of(Reply::make_error("MOVED 3999 127.0.0.1:6381"));
  ASSERT_TRUE(moved);
  EXPECT_EQ(moved->slot, 3999);
  EXPECT_EQ(moved->host, "127.0.0.1");
  EXPECT_EQ(moved->port, 6381);
  auto ask = redirect_of(Reply::make_error("ASK 16383 ::1:7000"));
  ASSERT_TRUE(ask);
  EXPECT_EQ(ask->slot, 16383);
  EXPECT_EQ(ask->host, "::1");
  EXPECT_EQ(ask->port, 7000);
  // A node that does not know its own address leaves the host empty.
  auto unknown = redirect_of(Reply::make_error("MOVED 0 :6380"));
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->host, "");
  EXPECT_EQ(unknown->port, 6380);
}

TEST(ReplyClassify, UnreadableRedirectsAreOtherErrors) {
  using warden::detail::redirect_of;
  for (const char* text : {"MOVED", "MOVED 3999", "MOVED 16384 h:1", "MOVED x h:1", "MOVED 1 h", "MOVED 1 h:0",
                           "MOVED 1 h:65536", "MOVED 1 h:1 extra", "ASK -1 h:1", "MOVED  1 h:1"}) {
    EXPECT_FALSE(redirect_of(Reply::make_error(text))) << text;
    EXPECT_EQ(classify(Reply::make_error(text)), reply_class::other_error) << text;
  }
  EXPECT_FALSE(redirect_of(Reply::make_error("ERR 1 h:1")));
  EXPECT_FALSE(redirect_of(Reply::make_string("MOVED 1 h:1")));
}

TEST(ReplyClassify, ErrorDetailIsTheTextAfterTheCode) {
  using warden::detail::error_detail;
  EXPECT_EQ(error_detail(Reply::make_error("WARDEN_WOULD_DEADLOCK  it would wait for itself")),
            "it would wait for itself");
  EXPECT_EQ(error_detail(Reply::make_error("NOAUTH")), "");
  EXPECT_EQ(error_detail(Reply::make_integer(1)), "");
}

TEST(ReplyAuthRefusal, CredentialsAndDatabaseRefusalsArePermanent) {
  using warden::detail::describe_auth_refusal;
  auto wrongpass = describe_auth_refusal(
      "AUTH", Reply::make_error("WRONGPASS invalid username-password pair or user is disabled."), false);
  EXPECT_EQ(wrongpass.error, errc::authentication_failed);
  EXPECT_EQ(wrongpass.message,
            "AUTH failed: wrong password (WRONGPASS invalid username-password pair or user is disabled.)");
  auto user = describe_auth_refusal("AUTH", Reply::make_error("WRONGPASS invalid username-password pair"), true);
  EXPECT_NE(user.message.find("wrong password, or no such user (or it is disabled)"), std::string::npos);
  auto noauth = describe_auth_refusal("SELECT", Reply::make_error("NOAUTH Authentication required."), false);
  EXPECT_EQ(noauth.error, errc::authentication_failed);
  EXPECT_EQ(noauth.message,
            "SELECT failed: the server requires a password and none was configured (NOAUTH Authentication required.)");
  auto noperm = describe_auth_refusal("SELECT", Reply::make_error("NOPERM no permission"), true);
  EXPECT_EQ(noperm.error, errc::authentication_failed);
  EXPECT_EQ(noperm.message, "SELECT failed: the user may not run this command (NOPERM no permission)");
  // Redis 5 words a wrong password as a plain ERR.
  auto old = describe_auth_refusal("AUTH", Reply::make_error("ERR invalid password"), false);
  EXPECT_EQ(old.error, errc::authentication_failed);
  EXPECT_EQ(old.message, "AUTH failed: ERR invalid password");
  auto unneeded = describe_auth_refusal(
      "AUTH", Reply::make_error("ERR AUTH <password> called without any password configured for the default user."),
      false);
  EXPECT_EQ(unneeded.error, errc::authentication_failed);
  EXPECT_EQ(unneeded.message,
            "AUTH failed: a password was configured but the server requires none (ERR AUTH <password> called without "
            "any password configured for the default user.)");
  // Redis 5's words for the same.
  auto unneeded5 =
      describe_auth_refusal("AUTH", Reply::make_error("ERR Client sent AUTH, but no password is set"), false);
  EXPECT_EQ(unneeded5.error, errc::authentication_failed);
  EXPECT_NE(unneeded5.message.find("a password was configured but the server requires none"), std::string::npos);
  // Any SELECT error is permanent (no such database).
  auto select = describe_auth_refusal("SELECT", Reply::make_error("ERR DB index is out of range"), false);
  EXPECT_EQ(select.error, errc::authentication_failed);
  EXPECT_EQ(select.message, "SELECT failed: ERR DB index is out of range");
}

TEST(ReplyAuthRefusal, OtherErrorsAreRetriedLikeAFailedConnect) {
  auto busy =
      warden::detail::describe_auth_refusal("AUTH", Reply::make_error("ERR max number of clients reached"), false);
  EXPECT_EQ(busy.error, errc::connection_refused);
  EXPECT_EQ(busy.message, "AUTH failed: ERR max number of clients reached");
}

TEST(ReplyDescribeError, ACauseIsSaidOnce) {
  using warden::detail::describe_error;
  using warden::detail::Response;
  Response refused{make_error_code(errc::connection_refused), {}};
  EXPECT_EQ(describe_error(refused), "connection refused");
  refused.detail = "connection refused (ECONNREFUSED)";
  EXPECT_EQ(describe_error(refused), "connection refused (ECONNREFUSED)");
  refused.detail = "Connection refused";
  EXPECT_EQ(describe_error(refused), "Connection refused");
  Response lost{make_error_code(errc::connection_lost), {}};
  lost.detail = "closed by the server";
  EXPECT_EQ(describe_error(lost), "connection lost: closed by the server");
}

}  // namespace
