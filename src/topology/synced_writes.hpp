// Lock writes followed by WAIT (Config::replica_sync), for one node.
//
// WAIT blocks the connection it is sent on until enough replicas have
// everything that connection wrote, or its timeout: sent on the node's
// command connection it would hold up every other caller. So these writes
// go on connections of their own, up to max_links, each carrying one group
// at a time: a write and its WAIT, or, when every link is busy, the writes
// that queued on a link while its last WAIT ran, followed by one WAIT that
// covers them all.
//
// WAIT counts the replicas that have this connection's last write; a
// command that wrote nothing leaves nothing new to count, so its WAIT says
// nothing about it. Lock scripts write whenever they take, keep, renew or
// release a hold, which is when the answer is read.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/command.hpp"
#include "io/connection.hpp"
#include "topology/replica_sync.hpp"

namespace warden::detail {

class SyncedWrites {
 public:
  static constexpr std::size_t max_links = 4;

  // `queries`: the node's command connection, which asks ROLE how many
  // replicas are attached (and carries renewals and releases while too few
  // are: waiting for replicas that are not there would only delay them).
  SyncedWrites(EventLoop& loop, const ConnectionOptions& options, ReplicaPolicy policy, Connection& queries);
  ~SyncedWrites();
  SyncedWrites(const SyncedWrites&) = delete;
  SyncedWrites& operator=(const SyncedWrites&) = delete;

  // Asks ROLE; a master with fewer replicas than needed is logged (error).
  // Writes wait for its first answer.
  void start();
  // As the node's connections: close() fails what is pending with
  // errc::shut_down; retire() fails what was not written yet with
  // connection_lost and not_run, what was in flight with connection_lost.
  void close();
  void retire(const std::string& why);

  // Sends `command` (ASKING first when `asking`), then WAIT, and hands the
  // write's own response to `handler`, with replica_shortfall set when it
  // ran and too few replicas acknowledged it. A `hold` write is not sent
  // while ROLE last said too few replicas are attached: the handler gets
  // errc::replica_sync_failed with not_run set, and the reason as detail.
  void send(Command command, bool asking, clock::time_point deadline, bool idempotent, replica_wait wait,
            Connection::Handler handler);

  // No write waiting for ROLE's first answer, no ROLE asked, no group out or
  // queued, no link with anything in flight (Node::idle: the loop thread may
  // park).
  bool idle() const;

 private:
  struct Write {
    Command command;
    bool asking = false;
    clock::time_point deadline;
    bool idempotent = false;
    replica_wait wait = replica_wait::none;
    Connection::Handler handler;
    Response response{};
  };
  struct Link;
  struct Group;

  void ask_role(std::chrono::milliseconds unless_asked_within);
  void on_role(Response&& response);
  void read_role(const Response& response, bool first);
  void dispatch(Write write);
  std::vector<Write> take_early();  // the early writes, their timer off
  void flush_early();
  void send_group(Link& link, std::vector<Write> writes);
  void complete(Link& link, Group& group);
  void fail_unsent(const Response& response);

  EventLoop& loop_;
  ConnectionOptions options_;
  ReplicaPolicy policy_;
  Connection& queries_;
  std::vector<std::unique_ptr<Link>> links_;
  // Writes that came before the first ROLE answer: held until it, so that a
  // master without replicas refuses even the first acquire unsent, or until
  // the earliest one's deadline (then sent, to fail as the links do).
  std::vector<Write> early_;
  TimerQueue::id early_timer_ = 0;
  clock::time_point early_until_{};
  // What the last ROLE answer said; nullopt before it, or when ROLE was
  // refused (an ACL without it): then only WAIT's answers count.
  std::optional<int> attached_;
  bool role_answered_ = false;
  bool role_asking_ = false;
  bool short_logged_ = false;  // the shortage was logged and has not ended since
  clock::time_point role_asked_{};
  bool closed_ = false;
};

}  // namespace warden::detail
