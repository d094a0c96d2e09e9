// count_down_latch: a coordinator waits until three workers (each with its own
// Client, as separate services would have) have finished their part. The
// latch lives in Redis in Redisson's layout, so Java services using
// RCountDownLatch of the same name take part as well.
//
//   ./count_down_latch redis://127.0.0.1:6379
#include <warden/warden.hpp>

#include <chrono>
#include <iostream>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

int main(int argc, char** argv) {
  const char* url = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
  try {
    warden::Client coordinator{warden::Config::from_url(url)};
    warden::CountDownLatch batch = coordinator.get_count_down_latch("latch:nightly-batch");
    batch.remove();  // a run that crashed may have left one behind
    if (!batch.try_set_count(3)) {
      std::cerr << "another coordinator runs this batch\n";
      return 1;
    }
    std::cout << "waiting for " << batch.count() << " workers\n";

    auto started = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    for (int i = 1; i <= 3; ++i) {
      workers.emplace_back([url, i] {
        warden::Client client{warden::Config::from_url(url)};
        std::this_thread::sleep_for(i * 50ms);  // the worker's part of the batch
        client.get_count_down_latch("latch:nightly-batch").count_down();
      });
    }

    // Woken by the last count_down through pub/sub, not by polling.
    bool done = batch.wait_for(30s);
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    for (auto& worker : workers) worker.join();
    if (!done) {
      std::cerr << "the workers did not finish in time\n";
      return 1;
    }
    std::cout << "all 3 workers done after " << took.count() << " ms; count = " << batch.count() << "\n";
  } catch (const warden::Error& error) {
    std::cerr << error.what() << "\n";
    return 1;
  }
  return 0;
}
