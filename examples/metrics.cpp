// Metrics from Config::observer: the hooks feed counters and histograms, and
// a scrape prints them in the Prometheus text exposition format. A service
// would serve exposition() on its /metrics endpoint (or hand the same events
// to whatever metrics library it uses); this program runs a little
// contention, some renewals and a time-out, then prints one scrape.
//
//   build/examples/metrics redis://127.0.0.1:6379
#include <warden/warden.hpp>

#include <array>
#include <chrono>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

namespace {

// A Prometheus histogram with fixed buckets (seconds).
class Histogram {
 public:
  static constexpr std::array<double, 14> bounds{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                 0.025,  0.05,    0.1,    0.25,  0.5,    1,     5};

  void observe(std::chrono::nanoseconds value) {
    double seconds = std::chrono::duration<double>(value).count();
    for (std::size_t i = 0; i < bounds.size(); ++i) {
      if (seconds <= bounds[i]) ++buckets_[i];
    }
    ++count_;
    sum_ += seconds;
  }

  // The _bucket, _sum and _count lines of `name` with `labels` ("a=\"b\",").
  void write(std::ostream& out, const std::string& name, const std::string& labels) const {
    for (std::size_t i = 0; i < bounds.size(); ++i) {
      out << name << "_bucket{" << labels << "le=\"" << bounds[i] << "\"} " << buckets_[i] << '\n';
    }
    out << name << "_bucket{" << labels << "le=\"+Inf\"} " << count_ << '\n';
    std::string plain = labels.empty() ? "" : "{" + labels.substr(0, labels.size() - 1) + "}";
    out << name << "_sum" << plain << ' ' << sum_ << '\n';
    out << name << "_count" << plain << ' ' << count_ << '\n';
  }

 private:
  std::array<unsigned long long, bounds.size()> buckets_{};  // cumulative, as Prometheus wants them
  unsigned long long count_ = 0;
  double sum_ = 0;
};

// What the hooks record. They run on the Client's I/O thread and must not
// block: each takes the mutex for a few additions only, and a scrape holds
// it only while formatting. (With several Clients, give them one Metrics.)
class Metrics {
 public:
  warden::Observer observer() {
    warden::Observer hooks;
    hooks.on_acquire = [this](const warden::AcquireEvent& e) {
      std::lock_guard<std::mutex> guard(mutex_);
      auto labels = label("kind", to_string(e.kind)) + label("outcome", outcome(e.outcome));
      acquire_wait_[labels].observe(e.waited);
      attempts_[label("kind", to_string(e.kind))] += static_cast<unsigned long long>(e.attempts);
      wakeups_[label("cause", "message")] += static_cast<unsigned long long>(e.woken_by_message);
      wakeups_[label("cause", "timer")] += static_cast<unsigned long long>(e.woken_by_timer);
      wakeups_[label("cause", "reconnect")] += static_cast<unsigned long long>(e.woken_by_reconnect);
    };
    hooks.on_release = [this](const warden::ReleaseEvent& e) {
      std::lock_guard<std::mutex> guard(mutex_);
      release_latency_[label("kind", to_string(e.kind)) + label("result", e.error ? "failed" : "ok")].observe(
          e.latency);
    };
    hooks.on_renewal = [this](const warden::RenewalEvent& e) {
      std::lock_guard<std::mutex> guard(mutex_);
      auto node = label("node", e.node);
      switch (e.phase) {
        case warden::renewal_phase::sent:
          ++renewal_batches_[node + label("phase", "sent")];
          break;
        case warden::renewal_phase::confirmed:
          ++renewal_batches_[node + label("phase", "confirmed")];
          renewal_latency_[node].observe(e.latency);
          renewed_holds_[node] += e.renewed;
          break;
        case warden::renewal_phase::failed:
          ++renewal_batches_[node + label("phase", "failed")];
          break;
      }
    };
    hooks.on_hold_lost = [this](const warden::HoldLostEvent& e) {
      std::lock_guard<std::mutex> guard(mutex_);
      ++lost_holds_[label("kind", to_string(e.kind)) + label("cause", e.cause.message())];
    };
    hooks.on_connection = [this](const warden::ConnectionEvent& e) {
      std::lock_guard<std::mutex> guard(mutex_);
      auto who = label("node", e.node) + label("role", to_string(e.role));
      const char* state = e.state == warden::connection_state::up     ? (e.reconnect ? "reconnected" : "up")
                          : e.state == warden::connection_state::down ? "down"
                                                                      : "connect_failed";
      ++connection_events_[who + label("event", state)];
      connected_[who] = e.state == warden::connection_state::up ? 1 : 0;
    };
    return hooks;
  }

  // One scrape, in the text exposition format (version 0.0.4).
  std::string exposition() const {
    std::lock_guard<std::mutex> guard(mutex_);
    std::ostringstream out;
    histograms(out, "warden_acquire_wait_seconds", "Time from an acquire call to its answer.", acquire_wait_);
    counters(out, "warden_acquire_attempts_total", "Acquire scripts sent.", attempts_);
    counters(out, "warden_waiter_wakeups_total", "Waiters woken before a re-try, by cause.", wakeups_);
    histograms(out, "warden_release_latency_seconds", "Time from sending a release to its answer.", release_latency_);
    counters(out, "warden_renewal_batches_total", "Watchdog renewal batches, by phase.", renewal_batches_);
    histograms(out, "warden_renewal_latency_seconds", "Round trip of a confirmed renewal batch.", renewal_latency_);
    counters(out, "warden_renewed_holds_total", "Holds extended by the watchdog.", renewed_holds_);
    counters(out, "warden_lost_holds_total", "Holds lost, by kind and cause.", lost_holds_);
    counters(out, "warden_connection_events_total", "Connection state changes.", connection_events_);
    gauges(out, "warden_connection_up", "1 while the connection is up.", connected_);
    return out.str();
  }

 private:
  // `name="value",` with the value escaped as the format requires.
  static std::string label(const char* name, std::string_view value) {
    std::string out = std::string(name) + "=\"";
    for (char c : value) {
      if (c == '\\' || c == '"') out += '\\';
      if (c == '\n') {
        out += "\\n";
        continue;
      }
      out += c;
    }
    return out + "\",";
  }
  static const char* outcome(warden::acquire_outcome value) {
    switch (value) {
      case warden::acquire_outcome::acquired:
        return "acquired";
      case warden::acquire_outcome::timed_out:
        return "timed_out";
      case warden::acquire_outcome::cancelled:
        return "cancelled";
      case warden::acquire_outcome::failed:
        return "failed";
    }
    return "?";
  }
  static std::string braces(const std::string& labels) {
    return labels.empty() ? "" : "{" + labels.substr(0, labels.size() - 1) + "}";
  }
  template <class Map>
  static void counters(std::ostream& out, const char* name, const char* help, const Map& values) {
    out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << " counter\n";
    for (auto& [labels, value] : values) out << name << braces(labels) << ' ' << value << '\n';
  }
  template <class Map>
  static void gauges(std::ostream& out, const char* name, const char* help, const Map& values) {
    out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << " gauge\n";
    for (auto& [labels, value] : values) out << name << braces(labels) << ' ' << value << '\n';
  }
  static void histograms(std::ostream& out, const char* name, const char* help,
                         const std::map<std::string, Histogram>& values) {
    out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << " histogram\n";
    for (auto& [labels, histogram] : values) histogram.write(out, name, labels);
  }

  mutable std::mutex mutex_;
  std::map<std::string, Histogram> acquire_wait_, release_latency_, renewal_latency_;
  std::map<std::string, unsigned long long> attempts_, wakeups_, renewal_batches_, renewed_holds_, lost_holds_,
      connection_events_;
  std::map<std::string, int> connected_;
};

}  // namespace

int main(int argc, char** argv) {
  const std::string url = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
  Metrics metrics;
  warden::Config config = warden::Config::from_url(url);
  config.observer = metrics.observer();
  config.lock_watchdog_timeout = 600ms;  // renewals every 200 ms, so a short run shows some
  try {
    warden::Client client(config);

    // Four threads contend for two locks: waits, unlock messages, re-tries.
    std::vector<std::thread> workers;
    for (int t = 0; t < 4; ++t) {
      workers.emplace_back([&client, t] {
        warden::Lock lock = client.get_lock(t % 2 ? "metrics:a" : "metrics:b");
        for (int i = 0; i < 25; ++i) {
          std::lock_guard<warden::Lock> guard(lock);
          std::this_thread::sleep_for(1ms);
        }
      });
    }
    for (auto& worker : workers) worker.join();

    // A hold the watchdog renews for a while, and a waiter that gives up.
    warden::Lock held = client.get_lock("metrics:held");
    held.lock();
    std::thread([&client] { (void)client.get_lock("metrics:held").try_lock_for(300ms); }).join();
    std::this_thread::sleep_for(700ms);
    held.unlock();

    std::cout << metrics.exposition();
  } catch (const warden::Error& error) {
    std::cerr << "metrics: " << error.what() << '\n';
    return 1;
  }
  return 0;
}
