// warden-bench: what a Client of the scale and waiters modes reports through
// its public hooks — renewal batches (Observer::on_renewal), lost holds
// (Observer::on_hold_lost: the same events every lock's lost-lock listeners
// get) and warnings (Config::logger) — kept for the report.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <warden/config.hpp>
#include <warden/observer.hpp>

namespace warden_bench {

struct renewal_record {
  std::int64_t t_ns = 0;  // steady_clock, when the event was reported
  warden::renewal_phase phase = warden::renewal_phase::sent;
  std::uint32_t count = 0, renewed = 0, gone = 0;
  std::int64_t latency_ns = 0;
};

class client_watch : public std::enable_shared_from_this<client_watch> {
 public:
  // Room for `capacity` renewal events is taken now, so recording them
  // allocates nothing while heap figures are read; later ones are counted
  // as dropped.
  explicit client_watch(std::size_t capacity);

  // Points `config`'s observer and logger here. The callbacks keep this
  // object alive for as long as the Client made from `config` is.
  void install(warden::Config& config);

  std::vector<renewal_record> renewals() const;
  std::vector<std::int64_t> sent_between(std::int64_t from_ns, std::int64_t to_ns) const;
  std::uint64_t sent_batches() const;
  std::uint64_t dropped() const;
  std::uint64_t holds_lost() const;
  std::string first_lost() const;
  // "warden logged N warning(s)..." and the first few, or nothing.
  std::vector<std::string> log_note() const;

 private:
  void renewal(const warden::RenewalEvent& event);
  void lost(const warden::HoldLostEvent& event);
  void logged(warden::log_level level, std::string_view message);

  mutable std::mutex mutex_;
  std::vector<renewal_record> records_;
  std::uint64_t sent_ = 0, dropped_ = 0, lost_ = 0, logged_ = 0;
  std::string first_lost_;
  std::vector<std::string> first_logged_;
};

}  // namespace warden_bench
