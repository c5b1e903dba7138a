#include "p2p/loop.hpp"

#include <cmath>

namespace checkmpi::p2p {

double clock_cost() {
  constexpr int kCalls = 1000;
  const double t0 = MPI_Wtime();
  double t = t0;
  for (int i = 0; i < kCalls; ++i) t = MPI_Wtime();
  return (t - t0) / kCalls;
}

void spin(double seconds) {
  const double end = MPI_Wtime() + seconds;
  while (MPI_Wtime() < end) {
  }
}

long long block_length(double clock_cost, double fastest_iteration, long long iterations) {
  if (!(fastest_iteration > 0) || !std::isfinite(fastest_iteration)) return 1;
  const double wanted = std::ceil(clock_cost / (kClockShare * fastest_iteration));
  const long long most = std::max(1LL, iterations / 10);
  return std::max(1LL, std::min(most, static_cast<long long>(std::min(wanted, 1e9))));
}

Stats sample_stats(const Samples& s, double factor) {
  Stats st = summarize(s.values);
  if (s.iterations > 0 && !s.values.empty()) st.mean = s.total / double(s.iterations);
  return scaled(st, factor);
}

void Pooled::add(const Samples& s) {
  all.values.insert(all.values.end(), s.values.begin(), s.values.end());
  all.block = medians.empty() ? s.block : std::max(all.block, s.block);
  all.blocks += s.blocks;
  all.iterations += s.iterations;
  all.total += s.total;
  medians.push_back(median(s.values));
}

double blocks_total(const Samples& s) {
  if (s.values.empty()) return 0;
  if (static_cast<long long>(s.values.size()) < s.blocks) {  // a subset: in no particular order
    double sum = 0;
    for (double v : s.values) sum += v;
    return sum / double(s.values.size()) * double(s.iterations);
  }
  double sum = 0;
  long long left = s.iterations;
  for (double v : s.values) {
    const long long in_block = std::min(left, s.block);
    sum += v * double(in_block);
    left -= in_block;
  }
  return sum;
}

void settle(MPI_Comm comm, const std::string& local_error) {
  int failing_rank = -1;
  const std::string message = first_error(comm, local_error, failing_rank);
  if (!message.empty()) throw ValidationError(message);
}

long long agree_block(MPI_Comm comm, long long mine) {
  long long block = mine;
  MPI_Allreduce(&mine, &block, 1, MPI_LONG_LONG, MPI_MAX, comm);
  return block;
}

}  // namespace checkmpi::p2p
