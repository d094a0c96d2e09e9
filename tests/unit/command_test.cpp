// Command: a command encoded once, turned from EVALSHA into EVAL, and its
// arguments replaced, checked against hiredis's own encoding of the argv.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/command.hpp"
#include "io/link_protocol.hpp"

namespace {

using warden::detail::append_bulk;
using warden::detail::Command;
using warden::detail::LinkProtocol;
using warden::detail::Script;

const Script script{"test", "return redis.call('pttl', KEYS[1])", "0123456789abcdef0123456789abcdef01234567"};

std::string hiredis_bytes(const std::vector<std::string>& argv) {
  std::string out;
  LinkProtocol::encode_command(argv, out);
  return out;
}

TEST(Command, AnArgvIsEncodedAsHiredisEncodesIt) {
  const std::vector<std::string> argv{"SET", "k", std::string("a\0b", 3)};
  Command command(argv);
  EXPECT_EQ(command.bytes(), hiredis_bytes(argv));
  EXPECT_EQ(command.name(), "SET");
  EXPECT_EQ(command.script(), nullptr);
  EXPECT_FALSE(command.is_evalsha());
  Command listed{"PING"};
  EXPECT_EQ(listed.bytes(), "*1\r\n$4\r\nPING\r\n");
}

TEST(Command, AScriptCallIsEvalshaWithKeyCountKeysAndArgs) {
  Command call = Command::evalsha(script, {"lock:a", "{lock:a}:x"}, {"30000", "", std::string("o\r\n1", 4)});
  EXPECT_EQ(call.bytes(), hiredis_bytes({"EVALSHA", script.sha1, "2", "lock:a", "{lock:a}:x", "30000", "",
                                         std::string("o\r\n1", 4)}));
  EXPECT_EQ(call.name(), "EVALSHA");
  EXPECT_EQ(call.script(), &script);
  EXPECT_TRUE(call.is_evalsha());
}

TEST(Command, ArgumentsEncodedByTheCallerMakeTheSameCall) {
  auto write = [](std::string& out) {
    append_bulk(out, "2");
    append_bulk(out, "k1");
    append_bulk(out, "k2");
    append_bulk(out, "30000");
    append_bulk(out, "");
  };
  EXPECT_EQ(Command::evalsha(script, 5, 0, write).bytes(),
            Command::evalsha(script, {"k1", "k2"}, {"30000", ""}).bytes());
}

TEST(Command, UseBodyTurnsEvalshaIntoEvalOnce) {
  Command call = Command::evalsha(script, {"k"}, {"1"});
  call.use_body();
  EXPECT_EQ(call.bytes(), hiredis_bytes({"EVAL", script.body, "1", "k", "1"}));
  EXPECT_EQ(call.name(), "EVAL");
  EXPECT_FALSE(call.is_evalsha());
  EXPECT_EQ(call.script(), &script);
  call.use_body();
  EXPECT_EQ(call.bytes(), hiredis_bytes({"EVAL", script.body, "1", "k", "1"}));
  Command plain{"GET", "k"};
  plain.use_body();
  EXPECT_EQ(plain.bytes(), hiredis_bytes({"GET", "k"}));
}

TEST(Command, ReplaceArgumentMatchesWholeArgumentsOnly) {
  const std::string mark = "\x01mark\x01";
  Command call = Command::evalsha(script, {mark + "x", mark}, {mark, "y" + mark, mark});
  EXPECT_TRUE(call.replace_argument(mark, "spublish"));
  // The second key reads like the mark and stays: only ARGV is replaced.
  EXPECT_EQ(call.bytes(),
            hiredis_bytes({"EVALSHA", script.sha1, "2", mark + "x", mark, "spublish", "y" + mark, "spublish"}));
  EXPECT_FALSE(call.replace_argument(mark, "publish"));
  // The script part is still where the body goes.
  call.use_body();
  EXPECT_EQ(call.bytes(),
            hiredis_bytes({"EVAL", script.body, "2", mark + "x", mark, "spublish", "y" + mark, "spublish"}));
}

TEST(Command, AKeyReadingLikeTheMarkIsNotReplaced) {
  const std::string mark = "\x01mark\x01";
  Command call = Command::evalsha(script, {mark}, {"a"});
  EXPECT_FALSE(call.replace_argument(mark, "spublish"));
  EXPECT_EQ(call.bytes(), hiredis_bytes({"EVALSHA", script.sha1, "1", mark, "a"}));
}

TEST(Command, TheNameIsNeverReplaced) {
  Command command{"PUBLISH", "ch", "PUBLISH"};
  EXPECT_TRUE(command.replace_argument("PUBLISH", "SPUBLISH"));
  EXPECT_EQ(command.bytes(), hiredis_bytes({"PUBLISH", "ch", "SPUBLISH"}));
  EXPECT_EQ(command.name(), "PUBLISH");
}

}  // namespace
