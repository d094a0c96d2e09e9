// Which replies mean "the server did not run the command": safe to send
// again, never an unknown outcome.
#include <gtest/gtest.h>

#include <warden/error.hpp>

#include "io/reply.hpp"

namespace warden::detail {
namespace {

TEST(DidNotRun, RefusalsBeforeRunning) {
  for (const char* text : {"LOADING Redis is loading the dataset in memory",
                           "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.",
                           "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
                           "TRYAGAIN Multiple keys request during rehashing of slot", "CLUSTERDOWN The cluster is down",
                           "NOSCRIPT No matching script. Please use EVAL.", "BUSY"}) {
    EXPECT_TRUE(did_not_run(Reply::make_error(text))) << text;
  }
}

TEST(DidNotRun, OtherErrorsAndRepliesAreNot) {
  for (const char* text :
       {"BUSYKEY Target key name already exists.", "WRONGTYPE Operation against a key holding the wrong kind of value",
        "ERR Error running script", "NOPERM this user has no permissions", "LOADINGX", ""}) {
    EXPECT_FALSE(did_not_run(Reply::make_error(text))) << text;
  }
  EXPECT_FALSE(did_not_run(Reply::make_string("LOADING")));
  EXPECT_FALSE(did_not_run(Reply::make_integer(1)));
  EXPECT_FALSE(did_not_run(Reply{}));
}

TEST(DidNotRun, OnlyALostReplyIsAnUnknownOutcome) {
  EXPECT_TRUE((Response{make_error_code(errc::timed_out), {}}).outcome_unknown());
  EXPECT_TRUE((Response{make_error_code(errc::connection_lost), {}}).outcome_unknown());
  Response refused{make_error_code(errc::timed_out), Reply::make_error("LOADING Redis is loading")};
  refused.not_run = true;
  EXPECT_FALSE(refused.outcome_unknown());
  // Config::replica_sync: a lock write refused unsent for want of replicas.
  Response short_of_replicas{make_error_code(errc::replica_sync_failed), {}};
  short_of_replicas.not_run = true;
  EXPECT_FALSE(short_of_replicas.outcome_unknown());
  EXPECT_FALSE((Response{make_error_code(errc::connection_refused), {}}).outcome_unknown());
  EXPECT_FALSE((Response{make_error_code(errc::shut_down), {}}).outcome_unknown());
  EXPECT_FALSE((Response{{}, Reply::make_error("LOADING Redis is loading")}).outcome_unknown());
  EXPECT_FALSE((Response{{}, Reply{}}).outcome_unknown());
}

}  // namespace
}  // namespace warden::detail
