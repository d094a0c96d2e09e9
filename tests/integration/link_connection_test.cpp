// One Connection driven directly on an EventLoop against a real redis-server:
// pipelining, a large value, deadlines, resending after a restart.
#include "link_harness.hpp"

namespace warden::test {
namespace {

// ---------------------------------------------------------------------------
// Connection on an EventLoop

TEST(LinkConnection, CommandsPipelinedInOneLoopTurnGetTheirOwnRepliesInOrder) {
  RedisServer server;
  RedisProbe probe(server);
  LogRecorder log;
  Counter ready;
  LoopHarness harness;
  Connection& connection = harness.connection(options_for(server, log), &ready);
  ASSERT_TRUE(ready.wait_for_at_least(1, 3s)) << log.all();

  static constexpr int count = 1000;
  // (which command, what it got), in the order the handlers ran.
  auto replies = std::make_shared<std::vector<std::pair<int, long long>>>();
  auto done = std::make_shared<std::promise<void>>();
  auto all_done = done->get_future();
  harness.run([&] {
    auto deadline = steady::now() + 2s;
    for (int i = 0; i < count; ++i) {
      connection.send({"INCR", "counter"}, deadline, false, [replies, done, i](Response&& r) {
        replies->emplace_back(i, r.error ? -1 : (r.reply.is_integer() ? r.reply.integer : -2));
        if (replies->size() == static_cast<std::size_t>(count)) done->set_value();
      });
    }
  });
  ASSERT_EQ(all_done.wait_for(3s), std::future_status::ready) << log.all();
  ASSERT_EQ(replies->size(), static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    ASSERT_EQ((*replies)[static_cast<std::size_t>(i)], std::make_pair(i, static_cast<long long>(i) + 1))
        << "handler #" << i;
  }
  EXPECT_EQ(probe.get("counter"), std::optional<std::string>("1000"));
}

TEST(LinkConnection, AFourMebibyteValueSurvivesPartialWritesAndSplitReads) {
  RedisServer server;
  RedisProbe probe(server);
  LogRecorder log;
  Counter ready;
  LoopHarness harness;
  Connection& connection = harness.connection(options_for(server, log), &ready);
  ASSERT_TRUE(ready.wait_for_at_least(1, 3s)) << log.all();

  // Every byte value, CR and LF included, in a pattern that does not repeat
  // at any power-of-two stride: a shifted or dropped chunk shows.
  std::string value(4u << 20, '\0');
  for (std::size_t i = 0; i < value.size(); ++i) value[i] = static_cast<char>((i * 131 + i / 4099) & 0xff);

  // SET and GET leave in one loop turn; the GET waits behind the SET's write.
  auto set = std::make_shared<std::promise<Response>>();
  auto get = std::make_shared<std::promise<Response>>();
  auto after = std::make_shared<std::promise<Response>>();
  auto set_done = set->get_future();
  auto get_done = get->get_future();
  auto after_done = after->get_future();
  harness.run([&] {
    auto deadline = steady::now() + 2500ms;
    connection.send({"SET", "big", value}, deadline, false, [set](Response&& r) { set->set_value(std::move(r)); });
    connection.send({"GET", "big"}, deadline, true, [get](Response&& r) { get->set_value(std::move(r)); });
    connection.send({"ECHO", "after"}, deadline, true, [after](Response&& r) { after->set_value(std::move(r)); });
  });
  ASSERT_TRUE(ready_within(set_done, 3s));
  ASSERT_TRUE(ready_within(get_done, 3s));
  ASSERT_TRUE(ready_within(after_done, 3s));
  Response set_response = set_done.get();
  Response get_response = get_done.get();
  EXPECT_TRUE(set_response.ok()) << describe(set_response);
  ASSERT_TRUE(get_response.ok()) << describe(get_response);
  ASSERT_EQ(get_response.reply.str.size(), value.size());
  EXPECT_TRUE(get_response.reply.str == value) << "the value came back changed";
  EXPECT_EQ(after_done.get().reply.str, "after");
  EXPECT_EQ(probe.command({"STRLEN", "big"}).integer, static_cast<long long>(value.size()));
}

TEST(LinkConnection, ACommandToAPausedServerTimesOutAndItsLateReplyIsDropped) {
  RedisServer server;
  LogRecorder log;
  Counter ready;
  LoopHarness harness;
  Connection& connection = harness.connection(options_for(server, log), &ready);
  ASSERT_TRUE(ready.wait_for_at_least(1, 3s)) << log.all();

  server.pause();
  auto start = steady::now();
  auto first = harness.send(connection, {"ECHO", "first"}, 150ms, false);
  ASSERT_TRUE(ready_within(first, 2s));
  auto waited = elapsed_ms(start);
  Response first_response = first.get();
  EXPECT_EQ(first_response.error, errc::timed_out) << describe(first_response);
  EXPECT_GE(waited, 150);
  EXPECT_LT(waited, 1000);

  // Sent while the first is still unanswered on the wire: after resume() the
  // server answers both, and the first answer must not be taken for this one.
  auto second = harness.send(connection, {"ECHO", "second"}, 2s, false);
  EXPECT_EQ(second.wait_for(50ms), std::future_status::timeout);
  server.resume();
  ASSERT_TRUE(ready_within(second, 2s));
  Response second_response = second.get();
  EXPECT_TRUE(second_response.ok()) << describe(second_response);
  EXPECT_EQ(second_response.reply.str, "second");

  auto third = harness.send(connection, {"ECHO", "third"}, 1s, false);
  ASSERT_TRUE(ready_within(third, 2s));
  EXPECT_EQ(third.get().reply.str, "third");
  EXPECT_EQ(ready.value(), 1) << "the connection was re-made:\n" << log.all();
  EXPECT_FALSE(log.contains("lost")) << log.all();
}

// A loop thread kept busy past a command's deadline (a slow handler, a
// starved thread) runs its timers before it polls the sockets again: an
// answer that reached the socket meanwhile is read and delivered, not
// timed out.
TEST(LinkConnection, AnAnswerThatArrivedWhileTheLoopWasBusyIsDeliveredNotTimedOut) {
  RedisServer busy_server, slow_server;
  LogRecorder log;
  Counter ready;
  LoopHarness harness;
  Connection& busy = harness.connection(options_for(busy_server, log), &ready);
  Connection& slow = harness.connection(options_for(slow_server, log), &ready);
  ASSERT_TRUE(ready.wait_for_at_least(2, 3s)) << log.all();

  auto answered = std::make_shared<std::promise<Response>>();
  auto answer = answered->get_future();
  harness.run([&] {
    auto now = steady::now();
    // Answered after 50 ms, well within its 300 ms.
    slow.send({"BLPOP", "nothing-here", "0.05"}, now + 300ms, false,
              [answered](Response&& r) { answered->set_value(std::move(r)); });
    // Answered at once; its handler keeps the loop thread busy past the
    // other command's deadline.
    busy.send({"ECHO", "busy"}, now + 2s, false, [](Response&&) { std::this_thread::sleep_for(600ms); });
  });
  ASSERT_TRUE(ready_within(answer, 3s));
  Response response = answer.get();
  EXPECT_FALSE(response.error) << describe(response);
  EXPECT_TRUE(response.reply.is_nil()) << describe(response);
}

TEST(LinkConnection, AfterARestartIdempotentCommandsAreSentAgainAndOthersReportConnectionLost) {
  RedisServer server;
  RedisProbe probe(server);
  LogRecorder log;
  Counter ready;
  LoopHarness harness;
  Connection& connection = harness.connection(options_for(server, log), &ready);
  ASSERT_TRUE(ready.wait_for_at_least(1, 3s)) << log.all();

  // Paused, the server takes the bytes into its socket buffer but runs
  // nothing: both commands are in flight, unanswered, when it dies.
  server.pause();
  auto idempotent = harness.send(connection, {"SET", "resent", "yes"}, 2500ms, true);
  auto other = harness.send(connection, {"INCR", "not-resent"}, 2500ms, false);
  harness.sync();  // both written
  server.kill();

  ASSERT_TRUE(ready_within(other, 2s));
  Response other_response = other.get();
  EXPECT_EQ(other_response.error, errc::connection_lost) << describe(other_response);
  EXPECT_EQ(idempotent.wait_for(0ms), std::future_status::timeout) << "it waits for the next connection";

  server.start();
  ASSERT_TRUE(ready_within(idempotent, 2s)) << log.all();
  Response idempotent_response = idempotent.get();
  EXPECT_TRUE(idempotent_response.ok()) << describe(idempotent_response);
  EXPECT_EQ(idempotent_response.reply.str, "OK");
  EXPECT_EQ(probe.get("resent"), std::optional<std::string>("yes"));
  EXPECT_FALSE(probe.exists("not-resent"));
  // Usually 2; 3 when the reconnect made at once after the reset reached the
  // dying server's listening socket before the kernel closed it (that ghost
  // connection is reset too, costing the SET one of its resends).
  EXPECT_GE(ready.value(), 2) << log.all();
  EXPECT_TRUE(log.contains("lost")) << log.all();
  EXPECT_TRUE(log.contains("re-established")) << log.all();
}

// A subscribed connection whose server speaks unasked (as Sentinel's
// +switch-master): with nothing in flight the loop thread parks off the
// sockets, and a message must still be read at once, not at its next timer
// (none within the hour here).
TEST(LinkConnection, AMessageOnAnIdleSubscribedLinkWakesTheParkedLoop) {
  RedisServer server;
  RedisProbe probe(server);
  LogRecorder log;
  Counter ready;
  LoopHarness harness;
  ConnectionOptions options = options_for(server, log, connection_role::subscriber);
  options.health_check_interval = 1h;
  options.input_wakes_parked = true;
  Connection& connection = harness.connection(options, &ready);
  ASSERT_TRUE(ready.wait_for_at_least(1, 3s)) << log.all();
  Counter messages;
  harness.run([&] {
    connection.on_push([&messages](const detail::Push& push) {
      if (push.kind == detail::push_kind::message) messages.add();
    });
    connection.send_subscription({"SUBSCRIBE", "unasked"});
  });
  // The loop thread may park once the subscription is confirmed.
  harness.loop().set_idle_probe([&connection] { return connection.idle(); });
  ASSERT_TRUE(eventually([&] {
    auto reply = probe.command({"PUBSUB", "NUMSUB", "unasked"});
    return reply.elements.size() == 2 && reply.elements[1].integer == 1;
  }));
  for (int i = 1; i <= 3; ++i) {
    // Time is the subject: the loop thread's last turn ends and it parks.
    std::this_thread::sleep_for(100ms);
    probe.command({"PUBLISH", "unasked", "switch"});
    EXPECT_TRUE(messages.wait_for_at_least(i, 2s)) << "message " << i << " was not read while the loop was parked";
  }
  harness.loop().set_idle_probe({});
}

}  // namespace
}  // namespace warden::test
