#include "core/watchdog.hpp"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <utility>
#include <cstdio>

#include "core/atomic_file.hpp"
#include "core/cli.hpp"
#include "core/errors.hpp"

namespace checkmpi {

double watchdog_option(const CommandLine& cli) {
  if (!cli.has("watchdog")) return -1;
  const double seconds = cli.get_double("watchdog", 0);
  // Below a second a healthy rank's quiet stretch (a barrier, a check) already counts as a hang.
  if (!(seconds == 0 || (seconds >= 1 && seconds <= 1e7)))
    throw UsageError("--watchdog must be 0 (off) or 1 to 10^7 seconds, got '" + cli.get("watchdog", "") + "'");
  return seconds;
}

namespace {

struct State {
  std::atomic<unsigned long long> beats{0};  // phase changes
  std::atomic<long long>& step = progress::detail::step;  // step or iteration within the phase
  std::atomic<bool> idle{false};
  std::mutex mutex;  // guards the texts
  std::string where = "start-up", waiting_for;
};

State& state() {
  static State s;
  return s;
}

void count_beat(State& s) { s.beats.store(s.beats.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }

}  // namespace

namespace progress {

namespace detail {
std::atomic<long long> step{-1};
}  // namespace detail

void at(const std::string& where, const std::string& waiting_for) {
  State& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.where = where;
    s.waiting_for = waiting_for;
  }
  s.step.store(-1, std::memory_order_relaxed);
  count_beat(s);
}

void idle(bool on) {
  state().idle.store(on, std::memory_order_relaxed);
  count_beat(state());
}

}  // namespace progress

Watchdog::Watchdog(std::string tool, double seconds, int rank)
    : tool_(std::move(tool)), seconds_(seconds), rank_(rank) {
  if (seconds_ > 0) thread_ = std::thread([this] { watch(); });
}

Watchdog::~Watchdog() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Watchdog::watch() {
  using Clock = std::chrono::steady_clock;
  const auto poll = std::chrono::duration<double>(std::clamp(seconds_ / 4, 0.05, 1.0));
  State& s = state();
  // Progress is a new phase (beats) or a new step within it.
  auto where = [&s] {
    return std::make_pair(s.beats.load(std::memory_order_relaxed), s.step.load(std::memory_order_relaxed));
  };
  auto seen = where();
  auto since = Clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, poll, [this] { return stop_; })) {
    const auto now_at = where();
    const auto now = Clock::now();
    if (now_at != seen || s.idle.load(std::memory_order_relaxed)) {
      seen = now_at;
      since = now;
      continue;
    }
    const double stalled = std::chrono::duration<double>(now - since).count();
    if (stalled >= seconds_) fire(stalled);
  }
}

void Watchdog::fire(double stalled) {
  State& s = state();
  std::string where, waiting_for;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    where = s.where;
    waiting_for = s.waiting_for;
  }
  const long long step = s.step.load(std::memory_order_relaxed);
  char host[256] = "?";
  ::gethostname(host, sizeof host - 1);
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.0f", stalled);
  std::string line = tool_ + ": watchdog: rank " + std::to_string(rank_) + " (" + host + ", pid " +
                     std::to_string(::getpid()) + "): no progress for " + seconds + " s in " + where;
  if (step >= 0) line += ", step " + std::to_string(step);
  if (!waiting_for.empty()) line += "; waiting for " + waiting_for;
  line += "; aborting the job\n";
  // One write, so that lines from different ranks do not interleave.
  [[maybe_unused]] const ssize_t written = ::write(STDERR_FILENO, line.data(), line.size());
  ::sleep(2);
  remove_pending_temporaries();
  ::alarm(15);
  MPI_Abort(MPI_COMM_WORLD, 1);
  ::_exit(1);
}

}  // namespace checkmpi
