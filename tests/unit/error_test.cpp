// warden::errc, its error category and warden::Error.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>

#include <warden/error.hpp>

namespace {

using warden::errc;

const std::vector<errc> all_codes = {
    errc::not_owner,          errc::lease_expired,       errc::timed_out,
    errc::connection_lost,    errc::connection_refused,  errc::authentication_failed,
    errc::server_error,       errc::invalid_argument,    errc::shut_down,
    errc::quorum_not_reached, errc::would_deadlock,      errc::wrong_type,
    errc::protocol_error,     errc::tls_verify_failed,   errc::tls_handshake_failed,
    errc::routing_failed,     errc::replica_sync_failed,
};

TEST(ErrorCategory, IsNamedWarden) { EXPECT_STREQ(warden::error_category().name(), "warden"); }

TEST(ErrorCategory, IsASingleton) { EXPECT_EQ(&warden::error_category(), &warden::error_category()); }

TEST(ErrorCategory, MessagesAreNonEmptyAndDistinct) {
  std::set<std::string> seen;
  for (errc code : all_codes) {
    std::string message = warden::error_category().message(static_cast<int>(code));
    EXPECT_FALSE(message.empty()) << static_cast<int>(code);
    EXPECT_TRUE(seen.insert(message).second) << "duplicate message: " << message;
  }
  EXPECT_EQ(seen.size(), all_codes.size());
}

TEST(ErrorCategory, UnknownValueStillHasAMessage) {
  std::string unknown = warden::error_category().message(9999);
  EXPECT_FALSE(unknown.empty());
  for (errc code : all_codes) EXPECT_NE(unknown, warden::error_category().message(static_cast<int>(code)));
}

TEST(ErrorCode, ErrcIsAnErrorCodeEnum) {
  EXPECT_TRUE(std::is_error_code_enum<errc>::value);
  std::error_code ec = errc::not_owner;  // implicit conversion through make_error_code
  EXPECT_EQ(ec.category(), warden::error_category());
  EXPECT_EQ(ec.value(), static_cast<int>(errc::not_owner));
}

TEST(ErrorCode, NoCodeIsZero) {
  // A zero value would read as "no error".
  for (errc code : all_codes) {
    std::error_code ec = warden::make_error_code(code);
    EXPECT_TRUE(static_cast<bool>(ec)) << ec.message();
  }
}

TEST(ErrorCode, ComparesEqualToItsEnumerator) {
  std::error_code ec = warden::make_error_code(errc::not_owner);
  EXPECT_TRUE(ec == errc::not_owner);
  EXPECT_TRUE(errc::not_owner == ec);
  EXPECT_FALSE(ec != errc::not_owner);
  EXPECT_FALSE(ec == errc::lease_expired);
  EXPECT_TRUE(ec != errc::lease_expired);
}

TEST(ErrorCode, MessageComesFromTheCategory) {
  for (errc code : all_codes) {
    std::error_code ec = code;
    EXPECT_EQ(ec.message(), warden::error_category().message(static_cast<int>(code)));
  }
}

TEST(ErrorCode, DiffersFromStdErrcWithTheSameValue) {
  std::error_code ours = errc::timed_out;
  std::error_code generic = std::make_error_code(static_cast<std::errc>(static_cast<int>(errc::timed_out)));
  EXPECT_EQ(ours.value(), generic.value());
  EXPECT_NE(ours, generic);
  EXPECT_FALSE(ours == std::errc::timed_out);
}

TEST(ErrorException, IsASystemError) {
  EXPECT_TRUE((std::is_base_of<std::system_error, warden::Error>::value));
  EXPECT_TRUE((std::is_base_of<std::runtime_error, warden::Error>::value));
}

TEST(ErrorException, CarriesCodeAndMessage) {
  warden::Error error(errc::lease_expired, "lock 'orders:42' on 127.0.0.1:6379");
  EXPECT_EQ(error.code(), errc::lease_expired);
  std::string what = error.what();
  EXPECT_NE(what.find("lock 'orders:42' on 127.0.0.1:6379"), std::string::npos) << what;
}

TEST(ErrorException, CaughtAsSystemError) {
  try {
    throw warden::Error(errc::not_owner, "release by a stranger");
  } catch (const std::system_error& error) {
    EXPECT_EQ(error.code(), errc::not_owner);
    EXPECT_EQ(error.code().category(), warden::error_category());
    return;
  }
  FAIL() << "not caught as std::system_error";
}

TEST(ErrorException, SaysTheCauseOnce) {
  // The code's text is added when the message does not say it...
  warden::Error bare(errc::lease_expired, "lock 'a' on h:1: release failed");
  EXPECT_STREQ(bare.what(), "lock 'a' on h:1: release failed: lease expired");
  // ...and not again when it does, in any case.
  warden::Error said(errc::connection_refused, "lock 'a' on h:1: Connection refused (ECONNREFUSED)");
  EXPECT_STREQ(said.what(), "lock 'a' on h:1: Connection refused (ECONNREFUSED)");
  warden::Error empty(errc::timed_out, "");
  EXPECT_STREQ(empty.what(), "timed out");
  // Copies keep the text (exceptions are copied when thrown).
  warden::Error copy = said;
  EXPECT_STREQ(copy.what(), said.what());
}

TEST(ErrorException, AcceptsAnyErrorCode) {
  std::error_code io = std::make_error_code(std::errc::connection_refused);
  warden::Error error(io, "connect");
  EXPECT_EQ(error.code(), io);
  EXPECT_EQ(error.code(), std::errc::connection_refused);
}

}  // namespace
