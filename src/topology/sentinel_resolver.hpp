// Which server is the master a group of sentinels watches. The sentinels are
// asked in turn (SENTINEL GET-MASTER-ADDR-BY-NAME); an answer is trusted only
// once the server itself says it is a master (ROLE), since a sentinel may
// lag behind a switch and a demoted master stays up. A switch message, a
// poll or a READONLY answer starts it over. Pure logic: the Sentinel
// topology performs each step and reports back.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "topology/slot_map.hpp"

namespace warden::detail {

class SentinelResolver {
 public:
  struct Step {
    enum class action {
      none,          // nothing to do
      ask_sentinel,  // SENTINEL GET-MASTER-ADDR-BY-NAME to `to`
      confirm_role,  // ROLE to `to`
      use_master,    // `to` is the master: send there (a different one than before: leave the old one)
      retry_later,   // no sentinel named a master that confirmed: try again later; `problem` says why
    };
    action what = action::none;
    NodeAddress to;
    // Which round an ask or confirm belongs to: answers of an older round
    // (overtaken by a switch message) are ignored.
    std::uint64_t round = 0;
    std::string problem;
  };

  // `sentinels`: at least one.
  explicit SentinelResolver(std::vector<NodeAddress> sentinels);

  // Starts a round (at start, for a poll, after a READONLY answer), asking
  // first the sentinel that answered last; none while one is under way.
  Step resolve();

  // The sentinel asked in `round` answered with the master's address; or
  // did not (nullopt), `problem` saying why. `answered`: the sentinel replied
  // (not knowing the name, or refusing), as opposed to not being reached.
  Step sentinel_answered(std::uint64_t round, std::optional<NodeAddress> master, bool answered,
                         const std::string& problem);

  // The candidate of `round` answered ROLE: it is the master, or it is not
  // (or could not be asked), `problem` saying why.
  Step role_answered(std::uint64_t round, bool is_master, const std::string& problem);

  // A sentinel announced +switch-master to `to`: confirm it (a new round).
  Step switched(const NodeAddress& to);

  // Sentinels learnt from SENTINEL SENTINELS; each is added once.
  void learn(const std::vector<NodeAddress>& sentinels);

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
  Step ask_next(const std::string& problem);
  Step ask();

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
