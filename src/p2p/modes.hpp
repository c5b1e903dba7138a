// The measurement modes and what they share.
#pragma once

#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "core/placement.hpp"
#include "p2p/buffer.hpp"
#include "p2p/fits.hpp"
#include "p2p/loop.hpp"
#include "p2p/options.hpp"

namespace checkmpi::p2p {

struct Session {
  const P2PConfig& cfg;
  MPI_Comm comm;  // the ranks taking part: 0 and 1, or (ring, nbc) all
  int rank = 0, size = 0;
  double clock_cost = 0;
};

// What rank 0 reports; other ranks' copies stay empty. Filled as the
// measurement goes, so that what was measured before a validation failure
// is still there; fits come last.
struct ModeOutput {
  Json results = Json::array();
  Json fits = Json::object();
  std::vector<std::string> noise;  // why results or fits are flagged noisy (core/samples.hpp thresholds)
  std::string table;  // OSU-style text, fitted parameters after it
};

// Flags `what` in out.noise when its p95 exceeds kNoiseTailRatio times its
// median or its mean kNoiseMeanRatio times, or a fit when its R^2 is below kNoiseFitR2 (a fit without R^2,
// e.g. from too few points, is not flagged).
void note_tail(ModeOutput& out, const Stats& s, const std::string& what);
void note_fit(ModeOutput& out, double r2, const std::string& what);

// {"L": "L = -0.117 us is not a latency: ..."}: what a fit's JSON carries
// as "unphysical", so that reports print "-" for those values and the reason.
Json unphysical_json(const std::vector<Unphysical>& wrong);
// "L = -" for a value among `wrong`, else "L = " and the value as `format` prints it.
std::string fitted_text(const std::string& name, double value, const char* format,
                        const std::vector<Unphysical>& wrong);

// Rank 0 of s.comm: "[index/count] WHAT ..." on stdout as each size starts.
void progress(const Session& s, std::size_t index, std::size_t count, const std::string& what);

// The points of a sweep, s.cfg.repeat times, interleaved (0 1 2 ... 0 1 2
// ...) so that drift reaches every size alike: measure(k) after a progress
// line naming label(k), then report(k) for every point, in order. A
// ValidationError (-c) first reports the points measured so far.
template <class Label, class Measure, class Report>
void sweep(const Session& s, std::size_t points, Label&& label, Measure&& measure, Report&& report) {
  const std::size_t runs = std::size_t(s.cfg.repeat);
  std::size_t measured = 0;
  try {
    for (std::size_t run = 0; run < runs; ++run)
      for (std::size_t k = 0; k < points; ++k) {
        progress(s, run * points + k + 1, runs * points, label(k));
        measure(k);
        if (run == 0) measured = k + 1;
      }
  } catch (const ValidationError&) {
    for (std::size_t k = 0; k < measured; ++k) report(k);
    throw;
  }
  for (std::size_t k = 0; k < points; ++k) report(k);
}

// {"QUANTITY": {"medians": [each run's, times factor], "spread": (max - min) / median or null}}
// for result["repeats"]; flags a spread above kNoiseRepeatSpread in out.noise.
Json repeats_json(ModeOutput& out, const std::string& what,
                  const std::vector<std::pair<std::string, const Pooled*>>& quantities, double factor = 1.0);

// Pair modes run on ranks 0 and 1 of s.comm; ring and nbc are collective
// over all.
// ValidationError (-c) leaves `out` with the sizes measured before.
void run_pingpong(const Session& s, ModeOutput& out);
void run_bandwidth(const Session& s, ModeOutput& out);
void run_ring(const Session& s, ModeOutput& out);
void run_loggp(const Session& s, ModeOutput& out);
void run_datatype(const Session& s, ModeOutput& out);
void run_nbc(const Session& s, ModeOutput& out);
void run_self(const Session& s, ModeOutput& out);     // on rank 0 alone
void run_barrier(const Session& s, ModeOutput& out);  // collective over all
void run_bibw(const Session& s, ModeOutput& out);
// P/2 pairs, rank i with rank i + P/2; `where`: every rank's placement.
void run_mbw_mr(const Session& s, ModeOutput& out, const std::vector<Placement>& where);
Json pairs_json(const std::vector<Placement>& where);
void run_coll(const Session& s, ModeOutput& out);  // collective over all
void run_rma(const Session& s, ModeOutput& out);
// pingpong --threads T (T > 1): T pairs of threads, each on its own communicator.
void run_pingpong_threads(const Session& s, ModeOutput& out);

// The loop for messages of `bytes`, timed on `timing`.
Loop make_loop(const Session& s, long long bytes, bool timing);

// A buffer for the largest contiguous message of the sweep.
std::unique_ptr<Buffer> message_buffer(const P2PConfig& cfg);

// -c for one payload: every sender fills its payload with its own pattern
// (and, for the test hook, damages one byte of it), receivers check what
// arrived against the sender's pattern.
class PayloadCheck {
 public:
  PayloadCheck(const P2PConfig& cfg, const Layout& layout, long long size, std::string label = "")
      : cfg_(cfg), layout_(layout), size_(size), label_(std::move(label)) {}
  void prepare(Buffer& send, int me, long long iteration) const;
  // "" when right; else "LABELsize S, offset O: expected 0xEE, got 0xGG
  // (rank R from rank F, iteration I)".
  std::string verify(const Buffer& received, int from, int me, long long iteration) const;

 private:
  const P2PConfig& cfg_;
  Layout layout_;
  long long size_;
  std::string label_;
};

// printf into a std::string (table rows).
template <class... Args>
std::string format(const char* fmt, Args... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

// Fits T(s) = alpha + s/beta to `times` and adds it to out.fits["hockney"]
// ({"segments": [...], "breakpoints": [...]}) and to the table, `what`
// naming the fitted time; returns the JSON object for extra keys.
Json& add_hockney(ModeOutput& out, const std::vector<double>& sizes, const std::vector<double>& times,
                  const std::string& what);

}  // namespace checkmpi::p2p
