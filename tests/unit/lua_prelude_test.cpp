// How the embedded Lua scripts are assembled (cmake/embed_lua.cmake): each
// text is the prelude pieces its first line asks for, in order, then the
// script's own file. The shared code lives only in the pieces.
#include <gtest/gtest.h>

#include <cstring>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "warden_scripts.hpp"

namespace warden::detail {
namespace {

struct Piece {
  const char* name;
  const char* text;
  const char* function;  // the local function it defines
};

const std::vector<Piece>& pieces() {
  static const std::vector<Piece> all = {
      {"key_guard", scripts::prelude::key_guard, "key_refusal"},
      {"cancel_check", scripts::prelude::cancel_check, "cancel_refusal"},
      {"acquire_check", scripts::prelude::acquire_check, "acquire_refusal"},
      {"settle_check", scripts::prelude::settle_check, "settled_count"},
      {"settle_record", scripts::prelude::settle_record, "settled_before"},
      {"release_latch", scripts::prelude::release_latch, "not_held"},
      {"rwlock_hold", scripts::prelude::rwlock_hold, "mode_and_count"},
      {"keep_hold", scripts::prelude::keep_hold, "keep_hold"},
      {"take_back", scripts::prelude::take_back, "take_back"},
      {"latch_guard", scripts::prelude::latch_guard, "latch_refusal"},
      {"count_guard", scripts::prelude::count_guard, "count_refusal"},
      {"pes_guard", scripts::prelude::pes_guard, "pes_refusal"},
      {"server_clock", scripts::prelude::server_clock, "server_now_ms"},
      {"reclaim", scripts::prelude::reclaim, "reclaim_expired"},
  };
  return all;
}

const Piece* piece(const std::string& name) {
  for (const auto& p : pieces()) {
    if (name == p.name) return &p;
  }
  return nullptr;
}

std::vector<std::string> words(const char* text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

// Text that only the pieces may hold: the code each one exists to share.
const std::vector<std::string_view> shared_code = {
    "redis.call('type', KEYS[1])",                             // the key-type guard
    "WARDEN_WRONG_TYPE the key is a ' ..",                     // its refusal
    "WARDEN_CANCELLED",                                        // the cancel check
    "redis.call('pexpire', KEYS[1], ttl)\n  end\n  return 1",  // the keep, inline
};

TEST(LuaPrelude, EveryScriptStartsWithThePiecesItAsksForAndRepeatsNone) {
  ASSERT_GT(std::size(scripts::assemblies), 0u);
  for (const auto& assembly : scripts::assemblies) {
    const std::string name = assembly.script->name;
    std::string_view body = assembly.script->body;
    std::string expected_start;
    for (const auto& word : words(assembly.prelude)) {
      const Piece* p = piece(word);
      ASSERT_NE(p, nullptr) << name << " asks for an unknown piece " << word;
      expected_start += p->text;
    }
    ASSERT_EQ(body.substr(0, expected_start.size()), expected_start) << name;
    std::string_view own = body.substr(expected_start.size());
    // The script's own text names the pieces it was sent with.
    const std::string declaration = std::string("--@prelude ") + assembly.prelude + "\n";
    if (*assembly.prelude != '\0') {
      EXPECT_EQ(own.substr(0, declaration.size()), declaration) << name;
    } else {
      EXPECT_NE(own.substr(0, 11), "--@prelude ") << name;
    }
    for (auto code : shared_code) {
      EXPECT_EQ(own.find(code), std::string_view::npos) << name << " repeats shared code: " << code;
    }
    // Each piece it asks for is used, by the script or by a piece sent after
    // it (acquire_check calls key_guard's and cancel_check's functions): a
    // piece sent for nothing costs every call.
    const std::vector<std::string> asked = words(assembly.prelude);
    for (std::size_t i = 0; i < asked.size(); ++i) {
      const std::string call = std::string(piece(asked[i])->function) + "(";
      bool used = own.find(call) != std::string_view::npos;
      for (std::size_t j = i + 1; j < asked.size() && !used; ++j) {
        used = std::string_view(piece(asked[j])->text).find(call) != std::string_view::npos;
      }
      EXPECT_TRUE(used) << name << " asks for " << asked[i] << " but nothing calls it";
    }
  }
}

TEST(LuaPrelude, EachPieceDefinesOneLocalFunction) {
  for (const auto& p : pieces()) {
    std::string_view text = p.text;
    const std::string definition = std::string("local function ") + p.function + "(";
    EXPECT_NE(text.find(definition), std::string_view::npos) << p.name;
    EXPECT_EQ(text.find("local function "), text.rfind("local function ")) << p.name << " defines more than one";
    EXPECT_EQ(text.back(), '\n') << p.name;
  }
}

TEST(LuaPrelude, TheScriptsThatShareCodeUseThePrelude) {
  // Every acquire checks its cancel mark; every script that refuses a key of
  // the wrong type does it through the guard; every settle through the check.
  const std::vector<std::pair<const Script*, std::vector<std::string>>> wanted = {
      {&scripts::lock_acquire, {"cancel_check", "key_guard", "acquire_check"}},
      {&scripts::fenced_acquire, {"cancel_check", "key_guard", "acquire_check"}},
      {&scripts::fair_acquire, {"cancel_check", "key_guard", "acquire_check"}},
      {&scripts::rwlock_read_acquire, {"cancel_check", "key_guard", "acquire_check"}},
      {&scripts::rwlock_write_acquire, {"cancel_check", "key_guard", "acquire_check"}},
      {&scripts::lock_force_release, {"key_guard"}},
      {&scripts::fair_force_release, {"key_guard"}},
      {&scripts::rwlock_force_release, {"key_guard"}},
      {&scripts::lock_inspect, {"key_guard"}},
      {&scripts::lock_resolve_acquire, {"settle_record", "settle_check", "keep_hold", "take_back"}},
      {&scripts::fenced_resolve_acquire, {"settle_record", "settle_check", "keep_hold", "take_back"}},
      {&scripts::fair_resolve_acquire, {"settle_record", "settle_check", "keep_hold", "take_back"}},
      {&scripts::rwlock_read_resolve, {"settle_record", "settle_check", "keep_hold"}},
      {&scripts::rwlock_write_resolve, {"settle_record", "settle_check", "keep_hold"}},
      {&scripts::lock_release, {"release_latch"}},
      {&scripts::fair_release, {"release_latch"}},
      {&scripts::rwlock_read_release, {"release_latch", "rwlock_hold"}},
      {&scripts::rwlock_write_release, {"release_latch", "rwlock_hold"}},
      {&scripts::semaphore_acquire, {"cancel_check", "count_guard"}},
      {&scripts::semaphore_settle, {"count_guard"}},
      {&scripts::semaphore_release, {"count_guard"}},
      {&scripts::semaphore_set, {"count_guard"}},
      {&scripts::semaphore_read, {"count_guard"}},
      {&scripts::pes_acquire, {"cancel_check", "pes_guard", "server_clock", "reclaim"}},
      {&scripts::pes_release, {"pes_guard", "server_clock", "reclaim"}},
      {&scripts::pes_update_lease, {"pes_guard", "server_clock", "reclaim"}},
      {&scripts::pes_read, {"pes_guard", "server_clock", "reclaim"}},
      {&scripts::pes_set, {"pes_guard", "server_clock", "reclaim"}},
      {&scripts::pes_settle, {"pes_guard"}},
      {&scripts::pes_renew, {"server_clock"}},
  };
  for (const auto& [script, uses] : wanted) {
    const scripts::Assembly* found = nullptr;
    for (const auto& assembly : scripts::assemblies) {
      if (assembly.script == script) found = &assembly;
    }
    ASSERT_NE(found, nullptr) << script->name;
    EXPECT_EQ(words(found->prelude), uses) << script->name;
  }
}

TEST(LuaPrelude, ScriptsThatPublishTakeTheCommandAtArgv3) {
  // lua/README.md: the publish command is ARGV[3] wherever a script publishes.
  for (const auto& assembly : scripts::assemblies) {
    std::string_view body = assembly.script->body;
    for (std::size_t at = body.find("redis.call(ARGV["); at != std::string_view::npos;
         at = body.find("redis.call(ARGV[", at + 1)) {
      EXPECT_EQ(body.substr(at, 19), "redis.call(ARGV[3],") << assembly.script->name;
    }
  }
}

}  // namespace
}  // namespace warden::detail
