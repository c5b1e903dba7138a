// A hung job ends with a diagnosis: the main thread reports its progress
// (cheap stores), and a watchdog thread that sees none for a while prints
// where this rank is and whom it waits for, then aborts the whole job.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace checkmpi {

namespace progress {

// Where this rank is ("step7 (isend-irecv): timed loop") and whom it waits
// for ("rank 1", "its neighbours ..."); called at phase changes, not per step.
// Counts as progress.
void at(const std::string& where, const std::string& waiting_for);
namespace detail {
// The step within the phase; constant-initialised, so that beat() is one
// relaxed store, inlined into the timed loops (no call, no guard).
extern std::atomic<long long> step;
}  // namespace detail

// One unit of progress (a step, an iteration; it must differ from the last
// one): a relaxed store.
inline void beat(long long step) { detail::step.store(step, std::memory_order_relaxed); }
// While idle the rank waits by design (p2p ranks that take no part) and
// its silence is no stall.
void idle(bool on);

}  // namespace progress

class CommandLine;

// --watchdog S of either tool: seconds without progress before the job is
// aborted (0: off), or -1 (the tool's default) when not given. UsageError
// unless 0 <= S <= 10^7.
double watchdog_option(const CommandLine& cli);

class Watchdog {
 public:
  // With seconds > 0, starts a thread that, once `seconds` pass without
  // progress, prints "TOOL: watchdog: rank R ..." on stderr, waits two seconds
  // (so that other stalled ranks can report too) and calls MPI_Abort. That is
  // the thread's only MPI call (MPI_THREAD_FUNNELED otherwise holds: only the
  // main thread calls MPI); alarm() ends the process should MPI_Abort hang.
  Watchdog(std::string tool, double seconds, int rank);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  void watch();
  [[noreturn]] void fire(double stalled);

  std::string tool_;
  double seconds_;
  int rank_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace checkmpi
