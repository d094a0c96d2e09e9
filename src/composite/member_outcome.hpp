// What one member of a MultiLock or RedLock answered: its vote in an acquire
// round, or its answer to a release, a lease change or a query. Plain values,
// so that answers cross between the members' I/O threads without sharing
// anything else.
#pragma once

#include <cstddef>
#include <string>
#include <system_error>
#include <vector>

#include "composite/quorum.hpp"

namespace warden::detail {

// One member's answer in an acquire round.
struct MemberVote {
  vote kind = vote::pending;
  std::error_code error;  // failed: why
  std::string cause;      // busy or failed: a short phrase ("taken by another owner", "connection refused", ...)
};

// One member's answer to a release or a query.
struct MemberAnswer {
  std::size_t member = 0;
  std::error_code error;
  bool value = false;  // query: its answer
  std::string cause;   // on error: a short phrase
};

// The kinds of the votes, which is all the quorum arithmetic looks at.
inline std::vector<vote> kinds(const std::vector<MemberVote>& votes) {
  std::vector<vote> result;
  result.reserve(votes.size());
  for (auto& v : votes) result.push_back(v.kind);
  return result;
}

}  // namespace warden::detail
