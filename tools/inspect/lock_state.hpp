// What Redis holds for one lock name, read and interpreted without I/O: the
// session (session.hpp) fetches the keys, interpret() decides what they mean.
// The layout is Redisson's (DESIGN.md §2), so locks written by either library
// read the same.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace warden::inspect {

// Raw values of the keys of one lock name.
struct RawLock {
  std::string type = "none";                                // TYPE NAME
  std::vector<std::pair<std::string, std::string>> fields;  // HGETALL NAME (a hash)
  long long pttl = -2;                                      // PTTL NAME
  std::vector<std::string> queue;                           // LRANGE redisson_lock_queue:{NAME} 0 -1
  std::map<std::string, long long> deadlines;               // ZRANGE redisson_lock_timeout:{NAME} WITHSCORES
  std::optional<std::string> token;                         // GET redisson_lock_token:{NAME}
  std::optional<std::string> value;                         // GET NAME (a string: a semaphore's or latch's count)
  std::string permits_type = "none";                        // TYPE of the permits' ZSET ({NAME}:timeout)
  std::vector<std::pair<std::string, long long>> permits;   // its members (raw bytes) and scores, in order
  long long now_ms = 0;                                     // the server's TIME, epoch ms
  // Filled in a second round, from what the first one found:
  std::map<std::string, long long> read_hold_ttls;      // PTTL of each read hold key
  std::map<std::string, long long> subscribers;         // PUBSUB NUMSUB per channel
  std::map<std::string, std::string> client_addresses;  // client id -> addr, from CLIENT LIST
};

struct Holder {
  std::string field;      // as stored: "<client id>:<thread id>[:write]"
  std::string client_id;  // empty when the field has no ':'
  std::string thread;
  long long count = 0;
  bool writer = false;                    // a read-write lock's write hold
  std::vector<long long> read_hold_ttls;  // a reader's holds, each one's PTTL (-2: key gone)
  std::string address;                    // where that client connects from, when known
};

struct Waiter {
  std::string id;  // "<client id>:<thread id>"
  std::string client_id;
  std::string thread;
  std::optional<long long> deadline_ms;  // epoch ms after which it counts as gone
  long long deadline_in_ms = 0;          // relative to the server's clock
  std::string channel;                   // where it is woken
  long long subscribers = 0;
  std::string address;
};

// One permit of a permit-expirable semaphore.
struct Permit {
  std::string id;                      // its 16 bytes in hex, as Redisson shows permit ids
  std::optional<long long> expiry_ms;  // epoch ms; none: a permit that does not expire
  long long expires_in_ms = 0;         // relative to the server's clock
};

// Redisson's score of a permit that does not expire.
constexpr long long permit_never_expires = 922337203685477LL;

struct LockState {
  std::string name;
  // "none", "lock", "fair", "rw", "fenced", "counter" (a string holding a
  // number: a semaphore's available permits or a count-down latch's count;
  // the layout alone does not tell which), "pes" (a permit-expirable
  // semaphore: its permits' ZSET exists), "not a lock"
  std::string kind;
  std::string key_type;  // TYPE of NAME
  std::string mode;      // rw: "read" / "write"
  long long pttl = -2;
  std::vector<Holder> holders;
  std::vector<Waiter> queue;
  std::optional<std::string> token;
  std::vector<std::pair<std::string, long long>> channels;  // channel -> subscribers
  std::string problem;                                      // why NAME is "not a lock"
  std::optional<long long> counter;                         // counter, pes: the number NAME holds (pes: missing = 0)
  std::vector<Permit> permits;                              // pes: the acquired permits, earliest expiry first

  bool held() const { return !holders.empty(); }
};

// Key names of a lock, as warden and Redisson write them.
struct LockKeys {
  std::string name, queue, deadlines, token, lock_channel, rw_channel;
  // Semaphores and latches name their keys by Redisson's own rule (prefixName
  // and suffixName: the name as it stands when it contains '{' at all):
  // redisson_sc:{NAME}, {NAME}:timeout, and the latch's channel, the name in
  // braces whatever it holds.
  std::string semaphore_channel, permit_timeouts, latch_channel;
  // A read hold's key: "{NAME}:<owner>:rwlock_timeout:<n>".
  std::string read_hold(const std::string& owner, long long n) const;
  // A fair lock waiter's wake-up channel: "redisson_lock__channel:{NAME}:<waiter>".
  std::string waiter_channel(const std::string& waiter) const { return lock_channel + ":" + waiter; }
};
LockKeys keys_of(const std::string& name);

// The reader hold keys and channels the second read round needs, given the
// first round.
std::vector<std::string> read_hold_keys(const std::string& name, const RawLock& raw);
std::vector<std::string> channels_to_count(const std::string& name, const RawLock& raw);

LockState interpret(const std::string& name, const RawLock& raw);

// "<client id>:<thread id>" split at its last ':' (":write" removed first).
void split_owner(const std::string& field, std::string& client_id, std::string& thread, bool& writer);

// True when a hash's fields look like a lock's: hold counts, and "mode" only
// with read/write. For scan.
bool looks_like_lock(const std::vector<std::pair<std::string, std::string>>& fields);

}  // namespace warden::inspect
