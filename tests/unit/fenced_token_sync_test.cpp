// FencedLock tokens under replica acknowledgement, driven by a fake host
// that plays the server: a token whose write too few replicas acknowledged
// is never handed out — neither from a try's answer nor from the settling
// of a try whose reply was lost (the settle draws a token of its own) — and
// the acquire is taken back and tried again; a settle that is acknowledged
// hands out the settle's token, not the lost try's.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include <warden/error.hpp>

#include "fake_host.hpp"
#include "lock/fenced_lock_core.hpp"

namespace warden::detail {
namespace {

using namespace std::chrono_literals;
using testing::FakeHost;

// The arguments of a RESP-encoded command (*N, then $len bulk strings).
std::vector<std::string> words(const std::string& resp) {
  std::vector<std::string> out;
  std::size_t at = resp.find("\r\n") + 2;
  while (at < resp.size() && resp[at] == '$') {
    auto end = resp.find("\r\n", at);
    auto size = std::stoul(resp.substr(at + 1, end - at - 1));
    out.push_back(resp.substr(end + 2, size));
    at = end + 2 + size + 2;
  }
  return out;
}

Reply pair(long long a, long long b) {
  Reply reply;
  reply.type = Reply::kind::array;
  reply.elements = {Reply::make_integer(a), Reply::make_integer(b)};
  return reply;
}

// What the fake server did and was asked.
struct Server {
  long long counter = 0;
  bool lose_first_try = true;
  bool replicas_acknowledge = false;  // WAIT's verdict on every write
  bool settle_acknowledged = false;   // ... except a kept settle's, when set
  int tries = 0, kept_settles = 0, take_backs = 0;

  Response short_of_replicas(Reply reply, bool acknowledged) {
    Response response;
    response.reply = std::move(reply);
    if (!acknowledged) response.replica_shortfall = "0 of 1 replicas acknowledged it within 300 ms";
    return response;
  }

  void answer_all(FakeHost& host) {
    while (!host.sent().empty()) {
      auto sent = std::move(host.sent().front());
      host.sent().pop_front();
      auto script = sent.script();
      auto argv = words(sent.command.bytes());
      Response response;
      if (script == "fenced_acquire") {
        ++tries;
        ++counter;  // the try ran: INCR, the hold taken
        if (lose_first_try && tries == 1) {
          response.error = make_error_code(errc::connection_lost);
        } else {
          response = short_of_replicas(pair(-1, counter), replicas_acknowledge);
        }
      } else if (script == "fenced_resolve_acquire") {
        // EVALSHA sha numkeys k1..k4 ARGV1..ARGV7: keep is ARGV[6].
        bool keep = argv.size() >= 3 + 4 + 6 && argv[3 + 4 + 5] == "1";
        if (keep) {
          ++kept_settles;
          ++counter;  // a fresh token for the kept hold
          response = short_of_replicas(pair(1, counter), settle_acknowledged || replicas_acknowledge);
        } else {
          ++take_backs;
          response.reply = Reply::make_integer(1);
        }
      } else {
        // A take-back of a short try, a release: done.
        if (script.find("resolve") != std::string::npos || script.find("release") != std::string::npos) ++take_backs;
        response.reply = Reply::make_integer(1);
      }
      sent.handler(std::move(response));
      host.drain();
    }
  }
};

struct FencedRun {
  std::shared_ptr<FakeHost> host = std::make_shared<FakeHost>();
  std::shared_ptr<FencedLockCore> lock = std::make_shared<FencedLockCore>(host, "f");
  Server server;
  std::vector<std::int64_t> tokens;
  bool done = false;
  std::error_code error;
  bool acquired = false;

  void acquire(std::chrono::milliseconds wait) {
    AcquireOptions options;
    options.on_token = [this](std::int64_t token) { tokens.push_back(token); };
    lock->acquire(
        1, wait, 10s,
        [this](std::error_code e, bool held, const std::string&) {
          done = true;
          error = e;
          acquired = held;
        },
        std::move(options));
    for (int turns = 0; turns < 200 && !done; ++turns) {
      host->run_for(10ms, [this] { server.answer_all(*host); });
    }
  }
  ~FencedRun() {
    host->shut_down();
    host->drop_pending();
  }
};

TEST(FencedTokenSync, AShortTryHandsOutNoToken) {
  FencedRun run;
  run.server.lose_first_try = false;
  run.acquire(300ms);
  ASSERT_TRUE(run.done);
  EXPECT_EQ(run.error, errc::replica_sync_failed);
  EXPECT_FALSE(run.acquired);
  EXPECT_TRUE(run.tokens.empty()) << "handed out " << run.tokens.front();
  EXPECT_GE(run.server.tries, 2);  // taken back and tried again
}

TEST(FencedTokenSync, AShortSettleOfALostTryHandsOutNoToken) {
  FencedRun run;
  run.acquire(300ms);
  ASSERT_TRUE(run.done);
  EXPECT_GE(run.server.kept_settles, 1) << "the lost try was not settled";
  EXPECT_EQ(run.error, errc::replica_sync_failed);
  EXPECT_TRUE(run.tokens.empty()) << "handed out " << run.tokens.front();
  EXPECT_GE(run.server.take_backs, 1);
}

TEST(FencedTokenSync, AnAcknowledgedSettleHandsOutTheSettlesToken) {
  FencedRun run;
  run.server.settle_acknowledged = true;
  run.acquire(300ms);
  ASSERT_TRUE(run.done);
  EXPECT_FALSE(run.error) << run.error.message();
  EXPECT_TRUE(run.acquired);
  ASSERT_EQ(run.tokens.size(), 1u);
  // 1 was the lost try's INCR; the settle drew 2 and that one was acknowledged.
  EXPECT_EQ(run.tokens[0], 2);
}

TEST(FencedTokenSync, AnAcknowledgedTryHandsOutItsToken) {
  FencedRun run;
  run.server.lose_first_try = false;
  run.server.replicas_acknowledge = true;
  run.acquire(300ms);
  ASSERT_TRUE(run.done);
  EXPECT_TRUE(run.acquired);
  ASSERT_EQ(run.tokens.size(), 1u);
  EXPECT_EQ(run.tokens[0], 1);
}

}  // namespace
}  // namespace warden::detail
