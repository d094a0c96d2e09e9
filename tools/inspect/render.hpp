// warden-inspect's output: a lock's state as text for people or as one line
// of JSON for scripts. Pure functions of the state.
#pragma once

#include <string>
#include <vector>

#include "inspect/lock_state.hpp"

namespace warden::inspect {

// Several lines, ending with a newline.
std::string render_text(const LockState& state);
// One JSON object, no newline.
std::string render_json(const LockState& state);

// scan: one line per lock / one JSON array.
std::string render_scan_text(const std::vector<LockState>& locks);
std::string render_scan_json(const std::vector<LockState>& locks);

// A JSON string literal of `text` (quotes and escapes included).
std::string json_string(const std::string& text);

// "1.25 s", "340 ms", "no expiry" (-1), "gone" (-2).
std::string describe_ttl(long long pttl_ms);

}  // namespace warden::inspect
