// Which server is the master a group of sentinels watches. The sentinels are
// asked in turn (SENTINEL GET-MASTER-ADDR-BY-NAME); an answer is trusted only
// once the server itself says it is a master (ROLE), since a sentinel may
// lag behind a switch and a demoted master stays up. A switch message, a
// poll or a READONLY answer starts it over. A pure machine (see
// docs/pure-machines.md): the Sentinel topology feeds it events with on() and
// performs the actions it answers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "io/action_list.hpp"
#include "topology/slot_map.hpp"

namespace warden::detail {

class SentinelResolver {
 public:
  // ---- events ----
  // Start a round (at start, for a poll, after a READONLY answer), asking
  // first the sentinel that answered last; nothing while one is under way.
  struct resolve_wanted {};
  // The sentinel asked in `round` answered with the master's address; or did
  // not (master nullopt), `problem` saying why. `answered`: the sentinel
  // replied (not knowing the name, or refusing), as opposed to not being reached.
  struct sentinel_answered {
    std::uint64_t round = 0;
    std::optional<NodeAddress> master;
    bool answered = false;
    std::string problem;
  };
  // The candidate of `round` answered ROLE: it is the master, or it is not
  // (or could not be asked), `problem` saying why.
  struct role_answered {
    std::uint64_t round = 0;
    bool is_master = false;
    std::string problem;
  };
  // A sentinel announced +switch-master to `to`: confirm it (a new round).
  struct switch_announced {
    NodeAddress to;
  };
  // Sentinels learnt from SENTINEL SENTINELS; each is added once.
  struct sentinels_learnt {
    std::vector<NodeAddress> sentinels;
  };
  using event = std::variant<resolve_wanted, sentinel_answered, role_answered, switch_announced, sentinels_learnt>;

  // ---- actions ----
  // Which round an ask or confirm belongs to: answers of an older round
  // (overtaken by a switch message) are ignored.
  struct ask_sentinel {  // SENTINEL GET-MASTER-ADDR-BY-NAME to `to`
    NodeAddress to;
    std::uint64_t round = 0;
  };
  struct confirm_role {  // ROLE to `to`
    NodeAddress to;
    std::uint64_t round = 0;
  };
  // `to` is the master: send there (a different one than before: leave the old one).
  struct use_master {
    NodeAddress to;
  };
  // No sentinel named a master that confirmed: try again later; `problem` says why.
  struct retry_later {
    std::string problem;
  };
  using action = std::variant<ask_sentinel, confirm_role, use_master, retry_later>;
  using actions = action_list<action, 1>;

  // `sentinels`: at least one.
  explicit SentinelResolver(std::vector<NodeAddress> sentinels);

  actions on(const event& e);

  const std::optional<NodeAddress>& master() const { return master_; }
  const std::vector<NodeAddress>& sentinels() const { return sentinels_; }
  // The sentinel asked last (after use_master: the one whose answer held).
  const NodeAddress& sentinel() const { return sentinels_[next_]; }
  bool resolving() const { return state_ != state::idle; }
  // After a retry_later: every sentinel replied (none was merely out of
  // reach), so the master name itself is the problem.
  bool every_sentinel_answered() const { return every_answered_; }

 private:
  enum class state { idle, asking, confirming };
  actions handle(const resolve_wanted& e);
  actions handle(const sentinel_answered& e);
  actions handle(const role_answered& e);
  actions handle(const switch_announced& e);
  actions handle(const sentinels_learnt& e);
  actions ask_next(const std::string& problem);
  actions ask();

  std::vector<NodeAddress> sentinels_;
  state state_ = state::idle;
  std::uint64_t round_ = 0;
  std::size_t next_ = 0;   // the sentinel to ask next
  std::size_t asked_ = 0;  // sentinels asked in this round
  NodeAddress candidate_;
  std::optional<NodeAddress> master_;
  std::string problems_;
  bool every_answered_ = true;
};

}  // namespace warden::detail
