// multi_lock: take two accounts' locks as one, all or nothing, as a transfer
// between them needs; show that two transfers in opposite directions do not
// deadlock, and that a fixed lease reaches every member.
//
//   ./multi_lock redis://127.0.0.1:6379
#include <warden/warden.hpp>

#include <chrono>
#include <iostream>
#include <mutex>
#include <thread>

using namespace std::chrono_literals;

int main(int argc, char** argv) {
  const char* url = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
  try {
    warden::Client client{warden::Config::from_url(url)};
    warden::Lock alice = client.get_lock("multi:account:alice");
    warden::Lock bob = client.get_lock("multi:account:bob");

    // Two transfers, listing the accounts in opposite orders, each repeated:
    // with one lock after the other this is the textbook deadlock.
    warden::MultiLock alice_to_bob{alice, bob};
    warden::MultiLock bob_to_alice{bob, alice};
    auto transfers = [](warden::MultiLock& accounts, const char* what) {
      for (int i = 0; i < 20; ++i) {
        std::lock_guard<warden::MultiLock> guard{accounts};  // both accounts, or wait
      }
      std::cout << what << ": 20 transfers done\n";
    };
    auto start = std::chrono::steady_clock::now();
    std::thread one([&] { transfers(alice_to_bob, "alice -> bob"); });
    std::thread two([&] { transfers(bob_to_alice, "bob -> alice"); });
    one.join();
    two.join();
    std::cout << "both directions finished in "
              << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count()
              << " ms\n";

    // A fixed lease: every member gets it once all are held, so they expire together.
    if (alice_to_bob.try_lock(warden::lock_options().with_wait(1s).with_lease(5s))) {
      std::cout << "held with a 5 s lease: alice " << alice.remain_time_to_live().value_or(0ms).count() << " ms, bob "
                << bob.remain_time_to_live().value_or(0ms).count() << " ms left\n";
      alice_to_bob.unlock();
    }

    // All or nothing: while bob is held elsewhere, the MultiLock takes neither.
    std::thread holder([&] {
      bob.lock();
      std::this_thread::sleep_for(500ms);
      bob.unlock();
    });
    while (!bob.is_locked()) std::this_thread::sleep_for(5ms);
    bool got = alice_to_bob.try_lock_for(100ms);
    std::cout << "with bob held by another thread, try_lock_for(100 ms): " << (got ? "got both" : "timed out")
              << "; alice locked meanwhile: " << std::boolalpha << alice.is_locked() << "\n";
    if (got) alice_to_bob.unlock();
    holder.join();

    try {
      alice_to_bob.unlock();
    } catch (const warden::Error& error) {
      std::cout << "unlocking a MultiLock we do not hold: " << error.what() << "\n";
    }
  } catch (const warden::Error& error) {
    std::cerr << "multi_lock failed: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
