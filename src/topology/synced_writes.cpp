#include "topology/synced_writes.hpp"

#include <algorithm>

#include <fmt/format.h>

#include <warden/error.hpp>

namespace warden::detail {
namespace {

// How often ROLE is asked again: while a master has enough replicas, now
// and then (all-known follows replicas that attach or leave); while it has
// too few, as soon as a write asks, so that one that attached is noticed.
constexpr std::chrono::milliseconds role_refresh{1'000};
constexpr std::chrono::milliseconds role_refresh_short{100};
// WAIT answers this long before the earliest deadline of its group, so its
// answer, not a time-out, reaches the callers.
constexpr std::chrono::milliseconds wait_margin{2};

ConnectionOptions synced_options(const ConnectionOptions& options) {
  ConnectionOptions out = options;
  out.role = connection_role::synced;
  return out;
}

}  // namespace

struct SyncedWrites::Link {
  explicit Link(EventLoop& loop, const ConnectionOptions& options) : connection(loop, synced_options(options)) {}
  Connection connection;
  bool busy = false;          // a group is out
  std::vector<Write> queued;  // the next group
};

struct SyncedWrites::Group {
  std::vector<Write> writes;
  std::size_t outstanding = 0;  // answers still to come: each write's, then WAIT's
  int needed = 0;
  std::chrono::milliseconds wait_for{0};
  std::optional<int> acknowledged;  // WAIT's answer; nullopt: it failed
  std::string wait_problem;         // why it failed
};

SyncedWrites::SyncedWrites(EventLoop& loop, const ConnectionOptions& options, ReplicaPolicy policy, Connection& queries)
    : loop_(loop), options_(options), policy_(policy), queries_(queries) {}

SyncedWrites::~SyncedWrites() { loop_.cancel(early_timer_); }

void SyncedWrites::start() { ask_role(std::chrono::milliseconds{0}); }

void SyncedWrites::ask_role(std::chrono::milliseconds unless_asked_within) {
  auto now = clock::now();
  if (closed_ || role_asking_ || (role_answered_ && now - role_asked_ < unless_asked_within)) return;
  role_asking_ = true;
  role_asked_ = now;
  auto deadline = now + options_.connect_timeout + policy_.timeout;
  queries_.send({"ROLE"}, deadline, true, [this](Response&& response) { on_role(std::move(response)); });
}

void SyncedWrites::on_role(Response&& response) {
  role_asking_ = false;
  if (closed_) return;
  bool first = !role_answered_;
  role_answered_ = true;
  role_asked_ = clock::now();
  read_role(response, first);
  flush_early();
}

void SyncedWrites::read_role(const Response& response, bool first) {
  if (response.error) return;  // the node is unreachable: its writes fail by themselves
  auto attached = attached_replicas(response.reply);
  if (!attached) {
    if (first && options_.log) {
      options_.log(log_level::warning,
                   fmt::format("warden: {}: ROLE was refused ({}), so the replicas attached are not known; lock "
                               "writes rely on WAIT's answer alone (replica_sync {})",
                               queries_.server(), response.reply.str, policy_.describe()));
    }
    attached_.reset();
    return;
  }
  attached_ = attached;
  int needed = policy_.needed(attached_);
  bool short_now = *attached_ < needed;
  if (short_now && !short_logged_ && options_.log) {
    // At start this is most likely a server without replicas: say what to do.
    options_.log(first ? log_level::error : log_level::warning,
                 fmt::format("warden: {}; acquires there are refused unsent until enough replicas attach (lock() "
                             "waits on, a bounded wait ends with errc::replica_sync_failed){}",
                             too_few_attached(queries_.server(), *attached_, needed, policy_),
                             first ? " (for a server without replicas, set Config::replica_sync.mode to off)" : ""));
  } else if (!short_now && short_logged_ && options_.log) {
    options_.log(log_level::info,
                 fmt::format("warden: {}: {} replica{} attached again; replica_sync ({}) is met", queries_.server(),
                             *attached_, *attached_ == 1 ? "" : "s", policy_.describe()));
  }
  short_logged_ = short_now;
}

void SyncedWrites::send(Command command, bool asking, clock::time_point deadline, bool idempotent, replica_wait wait,
                        Connection::Handler handler) {
  if (closed_) return handler(Response{make_error_code(errc::shut_down), {}});
  Write write{std::move(command), asking, deadline, idempotent, wait, std::move(handler)};
  if (role_answered_) return dispatch(std::move(write));
  ask_role(std::chrono::milliseconds{0});
  if (early_.empty() || deadline < early_until_) {
    loop_.cancel(early_timer_);
    early_until_ = deadline;
    early_timer_ = loop_.at(deadline, [this] {
      early_timer_ = 0;
      flush_early();
    });
  }
  early_.push_back(std::move(write));
}

bool SyncedWrites::idle() const {
  if (!early_.empty() || role_asking_) return false;
  return std::all_of(links_.begin(), links_.end(), [](const std::unique_ptr<Link>& link) {
    return !link->busy && link->queued.empty() && link->connection.idle();
  });
}

std::vector<SyncedWrites::Write> SyncedWrites::take_early() {
  loop_.cancel(early_timer_);
  early_timer_ = 0;
  auto early = std::move(early_);
  early_.clear();
  return early;
}

void SyncedWrites::flush_early() {
  for (auto& write : take_early()) dispatch(std::move(write));
}

void SyncedWrites::dispatch(Write write) {
  if (closed_) return write.handler(Response{make_error_code(errc::shut_down), {}});
  int needed = policy_.needed(attached_);
  bool short_now = attached_ && *attached_ < needed;
  ask_role(short_now ? role_refresh_short : role_refresh);
  if (short_now) {
    auto why = too_few_attached(queries_.server(), *attached_, needed, policy_);
    if (write.wait == replica_wait::hold) {
      Response refused{make_error_code(errc::replica_sync_failed), {}};
      refused.not_run = true;
      refused.detail = std::move(why);
      return write.handler(std::move(refused));
    }
    // A renewal or release goes through regardless, without a wait for
    // replicas that are not there.
    if (write.asking) queries_.send({"ASKING"}, write.deadline, true, [](Response&&) {});
    return queries_.send_encoded(write.command.bytes(), write.deadline, write.idempotent,
                                 [why = std::move(why), handler = std::move(write.handler)](Response&& response) {
                                   if (!response.error && !response.reply.is_error()) response.replica_shortfall = why;
                                   handler(std::move(response));
                                 });
  }
  for (auto& link : links_) {
    if (!link->busy) return send_group(*link, {std::move(write)});
  }
  if (links_.size() < max_links) {
    links_.push_back(std::make_unique<Link>(loop_, options_));
    links_.back()->connection.start();
    return send_group(*links_.back(), {std::move(write)});
  }
  auto shortest = std::min_element(links_.begin(), links_.end(),
                                   [](const auto& a, const auto& b) { return a->queued.size() < b->queued.size(); });
  (*shortest)->queued.push_back(std::move(write));
}

void SyncedWrites::send_group(Link& link, std::vector<Write> writes) {
  link.busy = true;
  auto group = std::make_shared<Group>();
  group->writes = std::move(writes);
  group->outstanding = group->writes.size() + 1;
  group->needed = policy_.needed(attached_);
  auto now = clock::now();
  auto earliest = clock::time_point::max();
  auto latest = clock::time_point::min();
  for (const auto& write : group->writes) {
    earliest = std::min(earliest, write.deadline);
    latest = std::max(latest, write.deadline);
  }
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(earliest - now) - wait_margin;
  // WAIT's timeout 0 means forever: never send it.
  group->wait_for = std::max(std::chrono::milliseconds{1}, std::min(policy_.timeout, left));

  Link* on = &link;
  auto answered = [this, on, group] {
    if (--group->outstanding == 0) complete(*on, *group);
  };
  for (std::size_t i = 0; i < group->writes.size(); ++i) {
    auto& write = group->writes[i];
    if (write.asking) link.connection.send({"ASKING"}, write.deadline, true, [](Response&&) {});
    link.connection.send_encoded(write.command.bytes(), write.deadline, write.idempotent,
                                 [group, i, answered](Response&& response) {
                                   group->writes[i].response = std::move(response);
                                   answered();
                                 });
  }
  // Not idempotent: sent again on a new connection, which has written
  // nothing, WAIT would answer at once with every replica.
  link.connection.send({"WAIT", std::to_string(group->needed), std::to_string(group->wait_for.count())}, latest, false,
                       [group, answered](Response&& response) {
                         if (!response.error && response.reply.is_integer()) {
                           group->acknowledged = static_cast<int>(response.reply.integer);
                         } else {
                           group->wait_problem = response.error ? describe_error(response) : response.reply.str;
                         }
                         answered();
                       });
}

void SyncedWrites::complete(Link& link, Group& group) {
  bool short_now = !group.acknowledged || *group.acknowledged < group.needed;
  std::string shortfall;
  if (short_now) {
    shortfall = group.acknowledged ? too_few_acknowledged(*group.acknowledged, group.needed, group.wait_for)
                                   : fmt::format("its WAIT failed: {}", group.wait_problem);
  }
  // The link takes its next group before the callers hear back: what they
  // send next queues behind it rather than overtaking it.
  link.busy = false;
  if (!closed_ && !link.queued.empty()) {
    auto next = std::move(link.queued);
    link.queued.clear();
    send_group(link, std::move(next));
  }
  if (short_now) ask_role(role_refresh_short);  // a replica may have gone
  for (auto& write : group.writes) {
    auto response = std::move(write.response);
    if (short_now && !response.error && !response.reply.is_error()) response.replica_shortfall = shortfall;
    write.handler(std::move(response));
  }
}

void SyncedWrites::fail_unsent(const Response& response) {
  for (auto& write : take_early()) {
    Response copy = response;
    write.handler(std::move(copy));
  }
  for (auto& link : links_) {
    auto queued = std::move(link->queued);
    link->queued.clear();
    for (auto& write : queued) {
      Response copy = response;
      write.handler(std::move(copy));
    }
  }
}

void SyncedWrites::close() {
  if (closed_) return;
  closed_ = true;
  fail_unsent(Response{make_error_code(errc::shut_down), {}});
  for (auto& link : links_) link->connection.close();
}

void SyncedWrites::retire(const std::string& why) {
  if (closed_) return;
  closed_ = true;
  Response not_run{make_error_code(errc::connection_lost), {}};
  not_run.not_run = true;
  not_run.detail = why;
  fail_unsent(not_run);
  for (auto& link : links_) link->connection.retire(why);
}

}  // namespace warden::detail
