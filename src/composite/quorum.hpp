// The arithmetic of composite locks: counting the members' votes of one
// acquire round, the Redlock validity time, the per-node time budget and the
// local bound a quorum of holds is known to be valid until. Pure: no I/O, no
// clocks read, so every rule is unit-tested without a server.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <variant>
#include <vector>

#include "io/action_list.hpp"
#include "io/timer_queue.hpp"

namespace warden::detail {

// What one member answered in an acquire round.
enum class vote {
  pending,  // no answer yet
  yes,      // taken for the caller
  busy,     // held by another owner (or the member's wait ran out)
  failed,   // an error: refused, timed out, server error, shut down
};

struct tally {
  std::size_t yes = 0;
  std::size_t busy = 0;
  std::size_t failed = 0;
  std::size_t pending = 0;
};
tally count_votes(const std::vector<vote>& votes);

// The outcome of a round, as soon as the votes so far settle it.
enum class verdict {
  undecided,    // wait for more answers
  acquired,     // held: every member (MultiLock) or a quorum in time (RedLock)
  contended,    // others hold what is needed: release, back off, try again
  unreachable,  // failed members alone make success impossible: an error
  expired,      // a quorum was taken, but too late to leave any validity
};

// MultiLock: all or nothing. A failure settles the round at once (the members
// still pending are released when they answer); a busy member only once every
// member answered, since all of them wait equally long.
verdict judge_all(const std::vector<vote>& votes);

// The Redlock quorum of `nodes`: a strict majority, nodes/2 + 1.
std::size_t quorum_of(std::size_t nodes);

// The clock drift allowance of a lease: 1% of it plus 2 ms, rounded up.
std::chrono::milliseconds clock_drift(std::chrono::milliseconds lease);

// Redlock validity: lease − elapsed − drift. Zero or negative: the holds may
// already have expired on some node, so the round must not count as acquired.
std::chrono::milliseconds validity(std::chrono::milliseconds lease, std::chrono::milliseconds elapsed);

// RedLock: acquired once a quorum said yes with validity left; unreachable
// once more nodes failed than may fail; contended once the quorum is out of
// reach for any other mix of "no" votes. `elapsed`: since the round started.
verdict judge_quorum(const std::vector<vote>& votes, std::chrono::milliseconds lease,
                     std::chrono::milliseconds elapsed);

// How long one node may take to answer an acquire before it counts as a
// "timed out" no vote: min(command_timeout, max(lease/10, 50 ms)), at least
// 1 ms. A tenth of the lease keeps a slow node from eating the validity; the
// 50 ms floor keeps very short leases from timing out healthy nodes.
std::chrono::milliseconds node_budget(std::chrono::milliseconds command_timeout, std::chrono::milliseconds lease);

// The local bound up to which `quorum` of the holds are known to be valid,
// given each held node's own bound: the quorum-th latest of them.
// time_point::min() when fewer than `quorum` bounds are given.
clock::time_point quorum_valid_until(std::vector<clock::time_point> held_until, std::size_t quorum);

// RedLock queries and releases: `confirmed` nodes agree, `failed` could not
// be asked. Known: a quorum confirmed (true), or too few can confirm even if
// every failed node would have (false). Unknown: the failed nodes decide it.
enum class quorum_answer { yes, no, unknown };
quorum_answer quorum_of_answers(std::size_t nodes, std::size_t confirmed, std::size_t failed);

// The validity of one RedLock hold, judged from what each node confirmed
// rather than from which nodes are believed taken. A node's bound is the
// local time up to which its hold is known valid: when its last confirmed
// acquire or renewal was sent, plus the lease, minus the drift. The hold is
// valid up to the quorum-th latest bound of the nodes it counts; once that
// time has come, the hold is lost for good: nothing confirmed afterwards
// (a renewal that answers late, a re-take) brings it back, since another
// owner may have held a majority in between. Events carry the time they
// happened and are fed in that order per node. A pure machine: events in
// through on(), actions out.
class QuorumValidity {
 public:
  explicit QuorumValidity(std::size_t nodes = 0);

  // ---- events (docs/pure-machines.md) ----
  // The acquire round that made the hold took `node`, valid up to `until`.
  struct taken {
    std::size_t node;
    clock::time_point until;
  };
  // At `at`, `node` confirmed its hold valid up to `until` (a renewal, an
  // answer of the round that came after it was settled, or a re-take). A
  // node already counted keeps the later bound; one not counted (lost, or
  // not taken by the round) is counted from now on. Nothing counts once the
  // hold is lost, and the hold is judged at `at` first.
  struct confirmed {
    std::size_t node;
    clock::time_point at;
    clock::time_point until;
  };
  // At `at`, `node`'s hold was found gone (key deleted, expired, restarted
  // empty, another owner). It no longer counts, whatever it confirmed.
  struct node_lost {
    std::size_t node;
    clock::time_point at;
  };
  // Time has reached `now`: the hold is lost once its bound is not after it.
  struct time_passed {
    clock::time_point now;
  };
  using event = std::variant<taken, confirmed, node_lost, time_passed>;

  // ---- actions ----
  struct confirmation_counted {  // the confirmation counts (confirmed only)
    std::size_t node;
  };
  struct hold_lost {};  // the hold is lost from now on (told once)
  using action = std::variant<confirmation_counted, hold_lost>;
  using actions = action_list<action, 2>;

  actions on(const event& e);
  // Whether `answer` (to a confirmed event) counted the confirmation.
  static bool counts(const actions& answer);

  bool lost() const { return lost_; }
  bool counted(std::size_t node) const { return node < bounds_.size() && bounds_[node].has_value(); }
  std::size_t counted_count() const;
  // How many counted nodes are confirmed valid past `t`.
  std::size_t valid_at(clock::time_point t) const;
  std::size_t size() const { return bounds_.size(); }
  // The quorum-th latest bound of the counted nodes, which may have passed;
  // time_point::min() once lost or while fewer than a quorum count.
  clock::time_point valid_until() const;

 private:
  void judge(clock::time_point now, actions& out);

  std::vector<std::optional<clock::time_point>> bounds_;  // nullopt: not counted
  bool lost_ = false;
};

}  // namespace warden::detail
