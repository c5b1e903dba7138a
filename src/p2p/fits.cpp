#include "p2p/fits.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace checkmpi::p2p {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double weighted_sse(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& w,
                    size_t first, size_t last, double a, double b) {
  double sse = 0;
  for (size_t i = first; i < last; ++i) sse += w[i] * std::pow(y[i] - a - b * x[i], 2);
  return sse;
}

std::string microseconds(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f us", seconds * 1e6);
  return buf;
}

}  // namespace

LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& w,
                 bool nonnegative_intercept, size_t first, size_t last) {
  last = std::min(last, x.size());
  LineFit f;
  double sw = 0, sx = 0, sy = 0;
  for (size_t i = first; i < last; ++i) sw += w[i], sx += w[i] * x[i], sy += w[i] * y[i];
  if (sw <= 0) return {false, kNaN, kNaN, kNaN, kNaN};
  const double mx = sx / sw, my = sy / sw;
  double sxx = 0, sxy = 0, syy = 0;
  for (size_t i = first; i < last; ++i) {
    sxx += w[i] * (x[i] - mx) * (x[i] - mx);
    sxy += w[i] * (x[i] - mx) * (y[i] - my);
    syy += w[i] * (y[i] - my) * (y[i] - my);
  }
  if (!(sxx > 0)) return {false, kNaN, kNaN, kNaN, kNaN};
  f.ok = true;
  f.slope = sxy / sxx;
  f.intercept = my - f.slope * mx;
  if (nonnegative_intercept && f.intercept < 0) {
    double sxx0 = 0, sxy0 = 0;
    for (size_t i = first; i < last; ++i) sxx0 += w[i] * x[i] * x[i], sxy0 += w[i] * x[i] * y[i];
    f.intercept = 0;
    f.slope = sxy0 / sxx0;
  }
  f.sse = weighted_sse(x, y, w, first, last, f.intercept, f.slope);
  f.r2 = syy > 0 ? 1.0 - f.sse / syy : (f.sse == 0 ? 1.0 : kNaN);
  return f;
}

std::vector<double> relative_weights(const std::vector<double>& y) {
  std::vector<double> w(y.size());
  for (size_t i = 0; i < y.size(); ++i) {
    const double v = std::max(std::fabs(y[i]), 1e-300);
    w[i] = 1.0 / (v * v);
  }
  return w;
}

HockneyFit fit_hockney(const std::vector<double>& sizes, const std::vector<double>& times, int max_segments,
                       int min_points) {
  HockneyFit result;
  const size_t n = std::min(sizes.size(), times.size());
  if (n < 2) return result;
  const std::vector<double> w = relative_weights(times);
  auto segment = [&](size_t i, size_t j, const LineFit& f) {
    return HockneySegment{sizes[i], sizes[j], f.intercept, f.slope > 0 ? 1.0 / f.slope : kInf, f.r2};
  };

  // fits[i][j]: the segment over points i..j; usable when time grows with size.
  std::vector<std::vector<LineFit>> fits(n, std::vector<LineFit>(n));
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j) fits[i][j] = fit_line(sizes, times, w, true, i, j + 1);
  // A lone segment may be short; one of several needs min_points sizes.
  auto cost = [&](size_t i, size_t j, bool alone) {
    const LineFit& f = fits[i][j];
    const bool long_enough = alone || j + 1 - i >= size_t(min_points);
    return f.ok && f.slope > 0 && long_enough ? f.sse : kInf;
  };

  // best[k][j]: least SSE covering points 0..j with k+1 segments; from[k][j]
  // the first point of the last of them.
  const int kmax = std::max(1, max_segments);
  std::vector<std::vector<double>> best(size_t(kmax), std::vector<double>(n, kInf));
  std::vector<std::vector<size_t>> from(size_t(kmax), std::vector<size_t>(n, 0));
  for (size_t j = 1; j < n; ++j) best[0][j] = cost(0, j, false);
  for (int k = 1; k < kmax; ++k)
    for (size_t j = 1; j < n; ++j)
      for (size_t i = 2; i <= j; ++i) {
        const double c = best[size_t(k - 1)][i - 1] + cost(i, j, false);
        if (c < best[size_t(k)][j]) best[size_t(k)][j] = c, from[size_t(k)][j] = i;
      }
  best[0][n - 1] = cost(0, n - 1, true);

  int chosen = -1;
  double best_score = kInf;
  for (int k = 0; k < kmax; ++k) {
    const double sse = best[size_t(k)][n - 1];
    if (!std::isfinite(sse)) continue;
    const double params = 3.0 * (k + 1) - 1.0;
    const double score = double(n) * std::log(std::max(sse / double(n), 1e-12)) + params * std::log(double(n));
    if (score < best_score) best_score = score, chosen = k;
  }
  if (chosen < 0) {  // time never grows with size: one segment, beta infinite
    result.segments.push_back(segment(0, n - 1, fits[0][n - 1]));
    return result;
  }
  size_t j = n - 1;
  for (int k = chosen; k >= 0; --k) {
    const size_t i = k == 0 ? 0 : from[size_t(k)][j];
    result.segments.insert(result.segments.begin(), segment(i, j, fits[i][j]));
    if (k > 0) result.breakpoints.insert(result.breakpoints.begin(), sizes[i]);
    j = i - 1;
  }
  return result;
}

LogGPDerived derive_loggp(const LogGPPoint& p, int n) {
  LogGPDerived d;
  d.d = p.prtt_1_0;
  d.g_plus_Gs = (p.prtt_n_0 - p.prtt_1_0) / double(n - 1);
  d.o_s = (p.prtt_n_d - p.prtt_1_0) / double(n - 1) - d.d;
  return d;
}

LogGPFit fit_loggp(const std::vector<LogGPPoint>& points, int n) {
  LogGPFit fit;
  fit.n = n;
  if (points.empty()) {
    fit.L = fit.o_s = fit.o_r = fit.g = fit.G = fit.r2 = kNaN;
    return fit;
  }
  std::vector<double> s, y, w;
  for (const auto& p : points) {
    s.push_back(p.size);
    y.push_back(derive_loggp(p, n).g_plus_Gs);
    w.push_back(1.0 / std::pow(std::max(p.prtt_1_0, 1e-300), 2));
  }
  const LineFit line = fit_line(s, y, w, true);
  fit.g = line.intercept;
  fit.G = line.slope;
  fit.r2 = line.r2;
  const LogGPPoint& first = points.front();
  const LogGPDerived d0 = derive_loggp(first, n);
  fit.o_s = d0.o_s;
  fit.o_r = first.o_r;
  fit.L = first.prtt_1_0 / 2 - fit.o_s - fit.o_r - std::max(first.size - 1, 0.0) * fit.G;
  for (size_t i = 0; i < points.size(); ++i) {
    const double model = fit.g + fit.G * s[i];
    fit.residuals.push_back(y[i] - model);
    const double d = derive_loggp(points[i], n).d;
    if (d < model)
      fit.warnings.push_back("size " + std::to_string((long long)s[i]) + ": d = " + microseconds(d) +
                             " < g + G*s = " + microseconds(model) +
                             ", so PRTT(n,d,s) is bound by the gap and o_s is not measured");
  }
  return fit;
}

std::vector<Unphysical> unphysical(const HockneySegment& s) {
  if (!(std::isfinite(s.alpha) && s.alpha <= 0)) return {};
  char range[64];
  std::snprintf(range, sizeof range, "%.0f-%.0f B", s.min_size, s.max_size);
  return {{"alpha", "alpha = " + microseconds(s.alpha) + " is not a latency: the times of " + range +
                        " extrapolate to zero or less at 0 bytes, where the fit stops at its bound alpha >= 0"}};
}

std::vector<Unphysical> unphysical(const LogGPFit& fit, const std::vector<LogGPPoint>& points) {
  std::vector<Unphysical> out;
  if (points.empty()) return out;
  const LogGPPoint& p = points.front();
  const std::string at = std::to_string((long long)p.size) + " B";
  const auto not_positive = [](double v) { return std::isfinite(v) && v <= 0; };  // NaN: not fitted, not wrong
  if (not_positive(fit.L))
    out.push_back({"L", "L = " + microseconds(fit.L) + " is not a latency: at " + at + " half the round trip (" +
                            microseconds(p.prtt_1_0 / 2) + ") is no longer than o_s + o_r + (s-1)G (" +
                            microseconds(fit.o_s + fit.o_r + std::max(p.size - 1, 0.0) * fit.G) +
                            "), so the overheads measured there are too large"});
  if (not_positive(fit.o_s))
    out.push_back({"o_s", "o_s = " + microseconds(fit.o_s) + " is not an overhead: at " + at +
                              " PRTT(n,d,s) was no longer than PRTT(1,0,s) + (n-1) d"});
  if (not_positive(fit.o_r))
    out.push_back({"o_r", "o_r = " + microseconds(fit.o_r) + " is not an overhead: the receive took no time at " + at});
  if (not_positive(fit.g))
    out.push_back({"g", "g = " + microseconds(fit.g) + " is not a gap: g + G*s extrapolates to zero or less at 0 "
                            "bytes, where the fit stops at its bound g >= 0"});
  if (not_positive(fit.G))
    out.push_back({"G", "G = " + std::to_string(fit.G * 1e9) + " ns/B is not a time per byte: g + G*s does not grow "
                            "with the size"});
  return out;
}

OverheadFit fit_overhead(const std::vector<double>& bytes, const std::vector<double>& overhead,
                         const std::vector<double>& reference) {
  const LineFit line = fit_line(bytes, overhead, relative_weights(reference), false);
  OverheadFit f;
  f.O = line.slope;
  f.o = line.intercept;
  f.r2 = line.r2;
  f.points = int(bytes.size());
  return f;
}

}  // namespace checkmpi::p2p
