// Model fits for point-to-point measurements, as pure functions: weighted
// least squares, the segmented Hockney model with breakpoint detection, the
// LogGP parameters from PRTT measurements, and the datatype overhead.
#pragma once

#include <string>
#include <vector>

namespace checkmpi::p2p {

struct LineFit {
  bool ok = false;  // false: fewer than two distinct x (everything else NaN)
  double intercept = 0, slope = 0;
  double r2 = 0;    // weighted coefficient of determination
  double sse = 0;   // weighted sum of squared residuals
};

// Minimises sum w_i (y_i - intercept - slope x_i)^2 over points [first, last).
// With nonnegative_intercept, a negative optimum is replaced by the best line
// through the origin, which is then the constrained optimum.
LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& w,
                 bool nonnegative_intercept, size_t first = 0, size_t last = size_t(-1));

// 1 / y^2: residuals count relative to the value, so that microsecond and
// millisecond points weigh alike.
std::vector<double> relative_weights(const std::vector<double>& y);

// A fitted parameter outside its physical range (a latency, overhead or gap
// that is not positive): the report prints "-" for it, and the reason.
struct Unphysical {
  std::string parameter;  // as the JSON names it: "L", "alpha", ...
  std::string reason;     // the value and why it cannot be
};

struct HockneySegment {
  double min_size = 0, max_size = 0;  // first and last measured size in the segment
  double alpha = 0;                   // s
  double beta = 0;                    // bytes/s; +inf when time does not grow with size
  double r2 = 0;
};

// alpha <= 0: no message takes no time (the fit met its bound alpha >= 0).
std::vector<Unphysical> unphysical(const HockneySegment& s);

struct HockneyFit {
  std::vector<HockneySegment> segments;
  std::vector<double> breakpoints;    // min_size of every segment after the first
};

// T(s) = alpha + s / beta fitted piecewise over sizes ascending (relative
// weights, alpha >= 0). Breakpoints are where the protocol regime changes:
// for each number of segments up to max_segments the split with the least
// squared relative error is found exactly (dynamic programming over split
// points, every segment at least min_points sizes and with time growing with
// size), and the number of segments minimising the Bayesian information
// criterion n ln(SSE/n) + (3k - 1) ln n wins. Fewer than two sizes: no segments.
HockneyFit fit_hockney(const std::vector<double>& sizes, const std::vector<double>& times, int max_segments = 3,
                       int min_points = 3);

// One size of the PRTT method (Hoefler et al., as in NetGauge): medians in s.
struct LogGPPoint {
  double size = 0;
  double prtt_1_0 = 0, prtt_n_0 = 0, prtt_n_d = 0;
  double o_r = 0;  // measured at the receiver
};

// What follows from one point: d = PRTT(1,0,s),
// g + G s = (PRTT(n,0,s) - PRTT(1,0,s)) / (n - 1),
// o_s = (PRTT(n,d,s) - PRTT(1,0,s)) / (n - 1) - d.
struct LogGPDerived {
  double d = 0, g_plus_Gs = 0, o_s = 0;
};
LogGPDerived derive_loggp(const LogGPPoint& p, int n);

struct LogGPFit {
  int n = 0;
  double L = 0, o_s = 0, o_r = 0, g = 0, G = 0, r2 = 0;
  std::vector<double> residuals;      // per point: (g + G s) measured - fitted, s
  std::vector<std::string> warnings;  // sizes where d < g + G s
};

// g and G: least squares of g + G s against s, weighted by 1 / PRTT(1,0,s)^2,
// g >= 0. o_s and o_r: the values at the smallest size. L from the smallest
// size's round trip: PRTT(1,0,s)/2 - o_s - o_r - (s - 1) G.
LogGPFit fit_loggp(const std::vector<LogGPPoint>& points, int n);

// L, o_s, o_r and g must be positive (a latency, overheads, a gap), G too
// (time per byte); each that is not, with why it came out so.
std::vector<Unphysical> unphysical(const LogGPFit& fit, const std::vector<LogGPPoint>& points);

struct OverheadFit {
  double O = 0;   // s/byte
  double o = 0;   // s per message
  double r2 = 0;
  int points = 0;
};

// overhead ~ o + O bytes, weighted by 1 / reference^2 (reference: the time of
// the same exchange without the datatype engine), so every size counts alike.
OverheadFit fit_overhead(const std::vector<double>& bytes, const std::vector<double>& overhead,
                         const std::vector<double>& reference);

}  // namespace checkmpi::p2p
