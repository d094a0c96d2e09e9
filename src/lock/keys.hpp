// Redis key and channel names of a lock, as Redisson lays them out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace warden::detail::keys {

// Why `name` cannot be a lock name, or nullopt. A name whose whole text is
// hashed (it has no non-empty hash tag by Redis's rule) and that contains '}'
// cannot be put in a hash tag, so its other keys could not share its slot.
std::optional<std::string> name_problem(std::string_view name);

// A name "carries its own hash tag" by Redis's rule: a non-empty text between
// its first '{' and the first '}' after that ("a{b}", "}{a}", "{a}{b}"; not
// "{}", "a{", "x{}y"); the key's slot is that tag's.

// "{name}", or the name itself when it carries its own hash tag: the part
// every derived key shares, so they all hash to the lock's Redis Cluster slot.
std::string tagged(std::string_view name);

// "<prefix>:{name}", or "<prefix>:name" when the name carries its own hash tag,
// so that every key of one lock hashes to the same Redis Cluster slot.
std::string prefixed(std::string_view prefix, std::string_view name);

// "{name}:<suffix>", or "name:<suffix>" when the name carries its own hash tag.
std::string suffixed(std::string_view name, std::string_view suffix);

// redisson_lock__channel:{name}
std::string lock_channel(std::string_view name);
// Where `name` starts inside lock_channel(name): a lock core keeps only its
// channel's name and reads its own name from it.
std::size_t lock_channel_name_at(std::string_view name);

// redisson_unlock_latch:{name}:<request-id>
std::string unlock_latch(std::string_view name, std::string_view request_id);

// warden_acquire_cancel:{name}:<attempt-id> — set when an acquire attempt
// whose reply was lost is settled as not taken, so that it never takes effect
std::string acquire_cancel(std::string_view name, std::string_view attempt_id);

// redisson_lock_queue:{name} — a fair lock's waiters, head first
std::string fair_queue(std::string_view name);

// redisson_lock_timeout:{name} — a fair lock's waiter deadlines (epoch ms)
std::string fair_timeouts(std::string_view name);

// redisson_lock_token:{name} — a fenced lock's token counter
std::string fenced_token(std::string_view name);

// redisson_rwlock:{name} — where a read-write lock's waiters are woken
std::string rwlock_channel(std::string_view name);

// {name}:<owner>:rwlock_timeout — prefix of the per-hold keys of one reader;
// hold n of that reader is "<prefix>:<n>".
std::string rwlock_timeout_prefix(std::string_view name, std::string_view owner);

// redisson_countdownlatch__channel__{name}: braces around the raw name
// whatever it holds (Redisson's rule for latches, unlike prefixed()). For a
// name without braces the channel shares the name's cluster slot; for one
// with braces or a '}' of its own it usually does not.
std::string latch_channel(std::string_view name);

}  // namespace warden::detail::keys
