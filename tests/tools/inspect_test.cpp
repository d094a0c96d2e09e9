// warden-inspect without a server: the command line, what raw key values
// mean (every lock kind, Redisson's and warden's, and keys that are not
// locks), and the output formats.
#include <gtest/gtest.h>

#include <stdexcept>

#include "inspect/lock_state.hpp"
#include "inspect/options.hpp"
#include "inspect/render.hpp"

namespace warden::inspect {
namespace {

using namespace std::chrono_literals;

TEST(InspectOptions, ShowWithEveryOption) {
  auto options = parse({"--url", "redis://h:1/2", "--json", "--watch", "--interval=0.25", "--count", "3", "--timeout",
                        "5", "orders:42"});
  EXPECT_EQ(options.what, Options::action::show);
  EXPECT_EQ(options.url, "redis://h:1/2");
  EXPECT_EQ(options.name, "orders:42");
  EXPECT_TRUE(options.json);
  EXPECT_TRUE(options.watch);
  EXPECT_EQ(options.interval, 250ms);
  EXPECT_EQ(options.count, 3);
  EXPECT_EQ(options.timeout, 5000ms);
}

TEST(InspectOptions, ScanForceUnlockHelpAndALockNamedScan) {
  EXPECT_EQ(parse({"scan", "orders:*"}).what, Options::action::scan);
  EXPECT_EQ(parse({"scan", "orders:*"}).pattern, "orders:*");
  auto force = parse({"--force-unlock", "-y", "x"});
  EXPECT_TRUE(force.force_unlock);
  EXPECT_TRUE(force.yes);
  EXPECT_EQ(parse({"x", "--help"}).what, Options::action::help);
  EXPECT_EQ(parse({"--version"}).what, Options::action::version);
  EXPECT_EQ(parse({"--", "scan"}).name, "scan");
  EXPECT_EQ(parse({"--", "--json"}).name, "--json");
}

TEST(InspectOptions, NonsenseIsRefusedWithAMessage) {
  for (auto args : std::vector<std::vector<std::string>>{
           {},
           {"a", "b"},
           {"scan"},
           {"--bogus", "x"},
           {"--url"},
           {"--watch", "--interval", "0", "x"},
           {"--watch", "--interval", "soon", "x"},
           {"--watch", "--count", "0", "x"},
           {"--interval", "1", "x"},
           {"--yes", "x"},
           {"--force-unlock", "--watch", "x"},
           {"--force-unlock", "scan", "*"},
       }) {
    EXPECT_THROW(parse(args), std::invalid_argument) << ::testing::PrintToString(args);
  }
}

TEST(InspectOptions, TheManualHasTheSectionsOfAManPage) {
  std::string text = manual();
  for (auto section : {"NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "EXAMPLES"}) {
    EXPECT_NE(text.find(std::string("\n") + section + "\n"), std::string::npos) << section;
  }
}

RawLock hash(std::vector<std::pair<std::string, std::string>> fields, long long pttl = 25'000) {
  RawLock raw;
  raw.type = "hash";
  raw.fields = std::move(fields);
  raw.pttl = pttl;
  raw.now_ms = 1'700'000'000'000;
  return raw;
}

TEST(InspectState, APlainLockItsHolderAndItsAddress) {
  auto raw = hash({{"1b4e28ba-2fa1-11d2-883f-0016d3cca427:12", "2"}});
  raw.client_addresses["1b4e28ba-2fa1-11d2-883f-0016d3cca427"] = "10.0.0.7:51000";
  raw.subscribers["redisson_lock__channel:{orders:42}"] = 3;
  auto state = interpret("orders:42", raw);
  EXPECT_EQ(state.kind, "lock");
  ASSERT_EQ(state.holders.size(), 1u);
  EXPECT_EQ(state.holders[0].client_id, "1b4e28ba-2fa1-11d2-883f-0016d3cca427");
  EXPECT_EQ(state.holders[0].thread, "12");
  EXPECT_EQ(state.holders[0].count, 2);
  EXPECT_EQ(state.holders[0].address, "10.0.0.7:51000");
  ASSERT_EQ(state.channels.size(), 1u);
  EXPECT_EQ(state.channels[0], std::make_pair(std::string("redisson_lock__channel:{orders:42}"), 3LL));
}

TEST(InspectState, AFairLocksQueueInOrderWithDeadlines) {
  auto raw = hash({{"c:1", "1"}});
  raw.queue = {"c:2", "d:7"};
  raw.deadlines = {{"c:2", raw.now_ms + 300'000}, {"d:7", raw.now_ms + 600'000}};
  raw.subscribers["redisson_lock__channel:{f}:c:2"] = 1;
  auto state = interpret("f", raw);
  EXPECT_EQ(state.kind, "fair");
  ASSERT_EQ(state.queue.size(), 2u);
  EXPECT_EQ(state.queue[0].id, "c:2");
  EXPECT_EQ(state.queue[0].deadline_in_ms, 300'000);
  EXPECT_EQ(state.queue[0].channel, "redisson_lock__channel:{f}:c:2");
  EXPECT_EQ(state.queue[0].subscribers, 1);
  EXPECT_EQ(state.queue[1].client_id, "d");
  EXPECT_EQ(state.queue[1].subscribers, 0);
  // A free fair lock with waiters is still a fair lock.
  RawLock free;
  free.queue = {"c:2"};
  EXPECT_EQ(interpret("f", free).kind, "fair");
  EXPECT_FALSE(interpret("f", free).held());
}

TEST(InspectState, AReadWriteLocksModeWriterAndReadHolds) {
  auto raw = hash({{"mode", "read"}, {"a:1", "2"}, {"b:5", "1"}, {"a:1:write", "1"}});
  EXPECT_EQ(read_hold_keys("rw", raw),
            (std::vector<std::string>{"{rw}:a:1:rwlock_timeout:1", "{rw}:a:1:rwlock_timeout:2",
                                      "{rw}:b:5:rwlock_timeout:1"}));
  raw.read_hold_ttls = {{"{rw}:a:1:rwlock_timeout:1", 900}, {"{rw}:a:1:rwlock_timeout:2", 1200}};
  auto state = interpret("rw", raw);
  EXPECT_EQ(state.kind, "rw");
  EXPECT_EQ(state.mode, "read");
  ASSERT_EQ(state.holders.size(), 3u);
  EXPECT_TRUE(state.holders[0].writer);  // the writer first
  EXPECT_EQ(state.holders[0].thread, "1");
  EXPECT_EQ(state.holders[1].read_hold_ttls, (std::vector<long long>{900, 1200}));
  EXPECT_EQ(state.holders[2].read_hold_ttls, (std::vector<long long>{-2}));  // its key is gone
  EXPECT_EQ(state.channels[0].first, "redisson_rwlock:{rw}");
  EXPECT_EQ(channels_to_count("rw", raw), (std::vector<std::string>{"redisson_rwlock:{rw}"}));
}

TEST(InspectState, AFencedLockHeldOrFree) {
  auto raw = hash({{"c:1", "1"}});
  raw.token = "17";
  auto held = interpret("fenced", raw);
  EXPECT_EQ(held.kind, "fenced");
  EXPECT_EQ(held.token, "17");
  RawLock free;
  free.token = "17";
  EXPECT_EQ(interpret("fenced", free).kind, "fenced");
  EXPECT_FALSE(interpret("fenced", free).held());
  EXPECT_EQ(keys_of("a{b}").token, "redisson_lock_token:a{b}");
  EXPECT_EQ(keys_of("x").token, "redisson_lock_token:{x}");
}

TEST(InspectState, KeysThatAreNotLocks) {
  RawLock string;
  string.type = "string";
  EXPECT_EQ(interpret("s", string).kind, "not a lock");
  EXPECT_NE(interpret("s", string).problem.find("string"), std::string::npos);
  EXPECT_EQ(interpret("h", hash({{"name", "alice"}})).kind, "not a lock");
  EXPECT_EQ(interpret("h", hash({{"mode", "sideways"}, {"a:1", "1"}})).kind, "not a lock");
  EXPECT_TRUE(interpret("h", hash({{"name", "alice"}})).holders.empty());
  EXPECT_EQ(interpret("n", RawLock{}).kind, "none");
  EXPECT_FALSE(looks_like_lock({}));
}

TEST(InspectState, SynchronizerKeysFollowRedissonsNamingRules) {
  auto plain = keys_of("jobs");
  EXPECT_EQ(plain.semaphore_channel, "redisson_sc:{jobs}");
  EXPECT_EQ(plain.permit_timeouts, "{jobs}:timeout");
  EXPECT_EQ(plain.latch_channel, "redisson_countdownlatch__channel__{jobs}");
  // Any '{' at all: the name as it stands (prefixName/suffixName), and the
  // latch's channel braces it regardless.
  auto braced = keys_of("a{");
  EXPECT_EQ(braced.semaphore_channel, "redisson_sc:a{");
  EXPECT_EQ(braced.permit_timeouts, "a{:timeout");
  EXPECT_EQ(braced.latch_channel, "redisson_countdownlatch__channel__{a{}");
}

TEST(InspectState, ACounterIsShownAsASemaphoreAndALatch) {
  RawLock raw;
  raw.type = "string";
  raw.value = "3";
  raw.subscribers["redisson_countdownlatch__channel__{gate}"] = 2;
  auto state = interpret("gate", raw);
  EXPECT_EQ(state.kind, "counter");
  ASSERT_TRUE(state.counter);
  EXPECT_EQ(*state.counter, 3);
  EXPECT_FALSE(state.held());
  ASSERT_EQ(state.channels.size(), 2u);
  EXPECT_EQ(state.channels[0], std::make_pair(std::string("redisson_sc:{gate}"), 0LL));
  EXPECT_EQ(state.channels[1], std::make_pair(std::string("redisson_countdownlatch__channel__{gate}"), 2LL));
  auto text = render_text(state);
  EXPECT_NE(text.find("gate: semaphore or count-down latch (a string holding 3)"), std::string::npos) << text;
  EXPECT_NE(text.find("semaphore 3 permits available"), std::string::npos) << text;
  EXPECT_NE(text.find("latch     count 3"), std::string::npos) << text;
  auto json = render_json(state);
  EXPECT_NE(json.find("\"kind\":\"counter\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"available_permits\":3,\"latch_count\":3"), std::string::npos) << json;

  raw.value = "many";
  EXPECT_EQ(interpret("gate", raw).kind, "not a lock");
  EXPECT_EQ(channels_to_count("gate", raw).size(), 2u);
}

TEST(InspectState, APermitExpirableSemaphoresPermitsWithTheirExpiries) {
  RawLock raw;
  raw.type = "string";
  raw.value = "1";
  raw.now_ms = 1'000'000;
  raw.permits_type = "zset";
  raw.permits = {{std::string("\x01\xab", 2), 1'004'000}, {std::string("\xff", 1), permit_never_expires}};
  auto state = interpret("pool", raw);
  EXPECT_EQ(state.kind, "pes");
  EXPECT_EQ(*state.counter, 1);
  ASSERT_EQ(state.permits.size(), 2u);
  EXPECT_EQ(state.permits[0].id, "01ab");
  EXPECT_EQ(*state.permits[0].expiry_ms, 1'004'000);
  EXPECT_EQ(state.permits[0].expires_in_ms, 4'000);
  EXPECT_EQ(state.permits[1].id, "ff");
  EXPECT_FALSE(state.permits[1].expiry_ms);
  ASSERT_EQ(state.channels.size(), 1u);
  EXPECT_EQ(state.channels[0].first, "redisson_sc:{pool}");
  auto text = render_text(state);
  EXPECT_NE(text.find("pool: permit-expirable semaphore, 1 permit available, 2 acquired"), std::string::npos) << text;
  EXPECT_NE(text.find("permit    01ab  expires in 4.00 s"), std::string::npos) << text;
  EXPECT_NE(text.find("permit    ff  never expires"), std::string::npos) << text;
  auto json = render_json(state);
  EXPECT_NE(json.find("\"permits\":[{\"id\":\"01ab\",\"expiry_epoch_ms\":1004000,\"expires_in_ms\":4000},"
                      "{\"id\":\"ff\"}]"),
            std::string::npos)
      << json;

  // Every permit taken: the count's key is gone (missing = 0).
  raw.type = "none";
  raw.value.reset();
  state = interpret("pool", raw);
  EXPECT_EQ(state.kind, "pes");
  EXPECT_EQ(*state.counter, 0);
}

TEST(InspectState, OwnerFieldsSplitAtTheirLastColon) {
  std::string client, thread;
  bool writer = false;
  split_owner("a:b:c:42:write", client, thread, writer);
  EXPECT_EQ(client, "a:b:c");
  EXPECT_EQ(thread, "42");
  EXPECT_TRUE(writer);
  split_owner("no-colon", client, thread, writer);
  EXPECT_EQ(client, "");
  EXPECT_EQ(thread, "no-colon");
  EXPECT_FALSE(writer);
}

TEST(InspectRender, JsonIsEscapedAndComplete) {
  EXPECT_EQ(json_string("a\"b\\c\nd\x01"), "\"a\\\"b\\\\c\\nd\\u0001\"");
  auto raw = hash({{"c:1", "1"}});
  auto json = render_json(interpret("we\"ird", raw));
  EXPECT_EQ(json.front(), '{');
  EXPECT_EQ(json.back(), '}');
  EXPECT_NE(json.find("\"name\":\"we\\\"ird\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"kind\":\"lock\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"held\":true"), std::string::npos) << json;
  EXPECT_NE(json.find("\"count\":1"), std::string::npos) << json;
  EXPECT_EQ(json.find('\n'), std::string::npos);
}

TEST(InspectRender, TextAndTtls) {
  EXPECT_EQ(describe_ttl(-2), "gone");
  EXPECT_EQ(describe_ttl(-1), "no expiry");
  EXPECT_EQ(describe_ttl(250), "250 ms");
  EXPECT_EQ(describe_ttl(29'500), "29.50 s");
  auto text = render_text(interpret("orders:42", hash({{"c:1", "2"}})));
  EXPECT_NE(text.find("orders:42: lock, held"), std::string::npos) << text;
  EXPECT_NE(text.find("count 2"), std::string::npos) << text;
  EXPECT_EQ(render_scan_text({}), "no locks held\n");
  EXPECT_EQ(render_scan_json({}), "[]");
}

}  // namespace
}  // namespace warden::inspect
