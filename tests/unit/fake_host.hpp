// A LockHost for unit tests of lock/ and composite/ code: no loop thread, no
// server. The test's own thread is the I/O thread: it runs what was posted
// (drain), runs the timers as they fall due (run_for), and answers the
// commands the code sent (sent, answer) with the replies a server would give.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "io/timer_queue.hpp"
#include "lock/hold_book.hpp"
#include "lock/lock_host.hpp"
#include "lock/watchdog.hpp"

namespace warden::detail::testing {

class FakeHost final : public LockHost,
                       private HostLoop,
                       private HostTopology,
                       public std::enable_shared_from_this<FakeHost> {
 public:
  // A command the code under test sent, waiting for the test's answer.
  struct Sent {
    Command command;
    std::string route_key;
    clock::time_point at;
    reply_handler handler;

    // The script's name (lua/<name>.lua), or "" for a plain command.
    std::string script() const { return command.script() != nullptr ? command.script()->name : ""; }
  };

  explicit FakeHost(LockSettings settings = {})
      : LockHost("00000000-0000-4000-8000-000000000000", settings),
        book_(settings.lock_watchdog_timeout),
        watchdog_(*this, book_) {}
  ~FakeHost() override { watchdog_.stop(); }

  // ---- what the test drives ----

  // Runs what was posted, until nothing is left.
  void drain() {
    while (!posted_.empty()) {
      auto task = std::move(posted_.front());
      posted_.pop_front();
      task();
    }
  }

  // Runs the loop for `span` of real time: each timer at its time (the
  // thread sleeps until the next one falls due), and what they post.
  // `on_sent` answers commands as they are sent.
  void run_for(std::chrono::milliseconds span, const std::function<void()>& on_sent = {}) {
    const auto until = clock::now() + span;
    for (;;) {
      drain();
      if (on_sent) on_sent();
      auto next = timers_.next();
      if (!next || *next > until) break;
      std::this_thread::sleep_until(*next);
      while (auto fn = timers_.take_next_due(clock::now())) {
        fn();
        drain();
      }
    }
    std::this_thread::sleep_until(until);
    drain();
  }

  // The commands sent and not yet answered, oldest first.
  std::deque<Sent>& sent() { return sent_; }
  // Answers the oldest command sent, then runs what the answer posted.
  void answer(Reply reply) {
    auto command = std::move(sent_.front());
    sent_.pop_front();
    Response response;
    response.reply = std::move(reply);
    command.handler(std::move(response));
    drain();
  }
  // Every command ever sent, answered or not, in order.
  const std::vector<Sent>& history() const { return history_; }

  Watchdog& watchdog() { return watchdog_; }
  std::size_t pending_timers() const { return timers_.size(); }
  void shut_down() {
    shut_down_ = true;
    watchdog_.stop();
  }
  // Drops what was sent, posted or tracked and never answered: those hold the
  // code under test (a lock core, which holds this host), so a test that ends
  // with work in flight calls it to leave no cycle behind.
  void drop_pending() {
    sent_.clear();
    posted_.clear();
    tracked_.clear();
    timers_.clear();
    book_.clear();
  }

  // ---- LockHost ----

  HostLoop& loop() override { return *this; }
  HostTopology& topology() override { return *this; }
  HoldBook& holds() override { return book_; }
  bool post(std::function<void()> task) override {
    if (shut_down_) return false;
    posted_.push_back(std::move(task));
    return true;
  }
  bool post_operation(std::function<void()> task) override { return post(std::move(task)); }
  using LockHost::run_script;
  void run_script(Command command, std::string_view route_key, clock::time_point, bool, reply_handler handler,
                  replica_wait) override {
    record(std::move(command), route_key, std::move(handler));
  }
  void send(Command command, std::string_view route_key, clock::time_point, bool, reply_handler handler) override {
    record(std::move(command), route_key, std::move(handler));
  }
  std::uint64_t track(std::function<void()> fail_with_shutdown) override {
    tracked_.emplace(next_ticket_, std::move(fail_with_shutdown));
    return next_ticket_++;
  }
  void untrack(std::uint64_t ticket) override { tracked_.erase(ticket); }
  void track(ShutdownHook& hook) override { hooks_.track(hook); }
  void untrack(ShutdownHook& hook) override { hooks_.untrack(hook); }
  void forget_core(const LockCore&, std::string_view) override {}
  void log(log_level, const std::string& message) const override { logged_.push_back(message); }
  const Observer& observer() const override { return observer_; }

  Observer& hooks() { return observer_; }
  const std::vector<std::string>& logged() const { return logged_; }

 private:
  void record(Command command, std::string_view route_key, reply_handler handler) {
    Sent sent{std::move(command), std::string(route_key), clock::now(), std::move(handler)};
    history_.push_back(Sent{sent.command, sent.route_key, sent.at, {}});
    sent_.push_back(std::move(sent));
  }

  // ---- HostLoop: the test's thread is the loop ----
  TimerQueue::id at(clock::time_point when, std::function<void()> fn) override {
    return timers_.add(when, std::move(fn));
  }
  TimerQueue::id after(std::chrono::milliseconds delay, std::function<void()> fn) override {
    return timers_.add(clock::now() + delay, std::move(fn));
  }
  void cancel(TimerQueue::id timer) override { timers_.cancel(timer); }
  void schedule(Timer& timer, clock::time_point when) override { timers_.schedule(timer, when); }
  void cancel(Timer& timer) override { timers_.cancel(timer); }
  bool in_loop_thread() const override { return true; }
  bool led_here() const override { return false; }
  void lead_until(const std::function<bool()>& done) override {
    while (!done() && !posted_.empty()) drain();
  }

  // ---- HostTopology: one server, no subscriber ----
  std::shared_ptr<ServerLinks> node_for(std::string_view) override { return nullptr; }
  std::string describe(std::string_view) const override { return "fake:6379"; }
  std::string server_of(std::string_view) override { return "fake:6379"; }
  const std::string& label() const override { return label_; }
  const char* publish_command() const override { return "publish"; }
  std::uint32_t group_of(std::string_view) const override { return 0; }

  TimerQueue timers_;
  std::deque<std::function<void()>> posted_;
  std::deque<Sent> sent_;
  std::vector<Sent> history_;
  std::unordered_map<std::uint64_t, std::function<void()>> tracked_;
  std::uint64_t next_ticket_ = 1;
  ShutdownHooks hooks_;
  Observer observer_;
  mutable std::vector<std::string> logged_;
  std::string label_ = "fake:6379";
  bool shut_down_ = false;
  HoldBook book_;
  Watchdog watchdog_;
};

// Whether `command` carries `argument` as one of its bulk strings (a key or an argument).
inline bool sends_argument(const Command& command, std::string_view argument) {
  std::string bulk = "$" + std::to_string(argument.size()) + "\r\n";
  bulk.append(argument);
  bulk += "\r\n";
  return command.bytes().find(bulk) != std::string::npos;
}

}  // namespace warden::detail::testing
