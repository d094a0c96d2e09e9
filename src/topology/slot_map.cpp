#include "topology/slot_map.hpp"

#include <fmt/format.h>

namespace warden::detail {

namespace {

bool is_slot(const Reply& reply) {
  return reply.is_integer() && reply.integer >= 0 && reply.integer < static_cast<long long>(cluster_slots);
}

// One [host, port, id, ...] entry of a CLUSTER SLOTS range.
std::optional<NodeAddress> node_of(const Reply& entry, const NodeAddress& asked) {
  if (entry.type != Reply::kind::array || entry.elements.size() < 2) return std::nullopt;
  const Reply& host = entry.elements[0];
  const Reply& port = entry.elements[1];
  if (host.type != Reply::kind::string || !port.is_integer() || port.integer <= 0 || port.integer > 65535) {
    return std::nullopt;
  }
  NodeAddress address{host.str, static_cast<std::uint16_t>(port.integer)};
  // The node does not know how it is reached: it is the one that answered.
  if (address.host.empty() || address.host == "?") address.host = asked.host;
  return address;
}

}  // namespace

std::optional<SlotMap> SlotMap::from_cluster_slots(const Reply& reply, const NodeAddress& asked, std::string* problem) {
  auto refuse = [problem](std::string why) -> std::optional<SlotMap> {
    if (problem) *problem = std::move(why);
    return std::nullopt;
  };
  if (reply.is_error()) return refuse(fmt::format("CLUSTER SLOTS was refused: {}", reply.str));
  if (reply.type != Reply::kind::array) return refuse("CLUSTER SLOTS answered something other than a list of ranges");
  SlotMap map;
  for (const Reply& range : reply.elements) {
    if (range.type != Reply::kind::array || range.elements.size() < 3 || !is_slot(range.elements[0]) ||
        !is_slot(range.elements[1]) || range.elements[0].integer > range.elements[1].integer) {
      return refuse("CLUSTER SLOTS listed a range that is not [first, last, master, replicas...]");
    }
    auto master = node_of(range.elements[2], asked);
    if (!master) return refuse("CLUSTER SLOTS listed a master without a host and port");
    auto index = map.intern(*master);
    map.masters_[index - 1].replicas = range.elements.size() - 3;
    for (auto slot = range.elements[0].integer; slot <= range.elements[1].integer; ++slot) {
      map.owner_[static_cast<std::size_t>(slot)] = index;
    }
  }
  return map;
}

std::uint16_t SlotMap::intern(const NodeAddress& address) {
  for (std::size_t i = 0; i < masters_.size(); ++i) {
    if (masters_[i].address == address) return static_cast<std::uint16_t>(i + 1);
  }
  masters_.push_back(Master{address, 0});
  return static_cast<std::uint16_t>(masters_.size());
}

const NodeAddress* SlotMap::master_of(std::uint16_t slot) const {
  if (slot >= cluster_slots) return nullptr;
  auto index = owner_[slot];
  return index == 0 ? nullptr : &masters_[index - 1].address;
}

std::size_t SlotMap::replicas_of(std::uint16_t slot) const {
  if (slot >= cluster_slots) return 0;
  auto index = owner_[slot];
  return index == 0 ? 0 : masters_[index - 1].replicas;
}

bool SlotMap::moved(std::uint16_t slot, const NodeAddress& to) {
  if (slot >= cluster_slots) return false;
  auto index = intern(to);
  if (owner_[slot] == index) return false;
  owner_[slot] = index;
  return true;
}

std::vector<NodeAddress> SlotMap::masters() const {
  // A master every slot of which moved away is no longer one.
  std::vector<bool> serves(masters_.size(), false);
  for (auto index : owner_) {
    if (index != 0) serves[index - 1] = true;
  }
  std::vector<NodeAddress> out;
  for (std::size_t i = 0; i < masters_.size(); ++i) {
    if (serves[i]) out.push_back(masters_[i].address);
  }
  return out;
}

std::vector<SlotRange> SlotMap::uncovered() const {
  std::vector<SlotRange> out;
  for (std::size_t slot = 0; slot < cluster_slots; ++slot) {
    if (owner_[slot] != 0) continue;
    auto at = static_cast<std::uint16_t>(slot);
    if (!out.empty() && out.back().last + 1 == at) {
      out.back().last = at;
    } else {
      out.push_back(SlotRange{at, at});
    }
  }
  return out;
}

}  // namespace warden::detail
