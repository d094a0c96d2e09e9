// Which node of a Redis Cluster serves each of its 16384 hash slots, as
// learnt from CLUSTER SLOTS and corrected by MOVED replies. Plain data, no
// I/O: the router asks it where a key goes and feeds it what nodes say.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/reply.hpp"
#include "topology/node_address.hpp"

namespace warden::detail {

constexpr std::size_t cluster_slots = 16384;

// A range of slots that no master serves (a cluster that is not fully set up,
// or that lost a shard).
struct SlotRange {
  std::uint16_t first = 0;
  std::uint16_t last = 0;
};

class SlotMap {
 public:
  // Parses a CLUSTER SLOTS reply: [[first, last, [host, port, id, ...],
  // replica..., ], ...]. An empty host (or "?", an unknown endpoint) means the
  // node that answered, `asked`. nullopt, with `problem` set, for a reply of
  // another shape (a node that is not in cluster mode answers with an error).
  static std::optional<SlotMap> from_cluster_slots(const Reply& reply, const NodeAddress& asked, std::string* problem);

  // The master serving `slot`, or nullptr when no node does.
  const NodeAddress* master_of(std::uint16_t slot) const;
  // Replicas the last CLUSTER SLOTS listed for the master of `slot` (0 when
  // the slot was only learnt from a MOVED, or is not served).
  std::size_t replicas_of(std::uint16_t slot) const;

  // A MOVED reply: `slot` is now served by `to`, for good. Returns whether
  // that changed anything.
  bool moved(std::uint16_t slot, const NodeAddress& to);

  // Every master that serves at least one slot, in the order first seen.
  std::vector<NodeAddress> masters() const;
  // The slots no master serves, as ranges in ascending order.
  std::vector<SlotRange> uncovered() const;

 private:
  // One entry per master seen; slots point into it (0: none, else index + 1)
  // so that the table stays 32 KiB however many ranges the cluster has.
  struct Master {
    NodeAddress address;
    std::size_t replicas = 0;
  };
  std::uint16_t intern(const NodeAddress& address);

  std::vector<Master> masters_;
  std::array<std::uint16_t, cluster_slots> owner_{};
};

}  // namespace warden::detail
