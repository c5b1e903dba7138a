#include <cmath>
#include <iostream>

#include "core/events.hpp"
#include "core/watchdog.hpp"
#include "p2p/modes.hpp"
#include "p2p/workload.hpp"

namespace checkmpi::p2p {

Loop make_loop(const Session& s, long long bytes, bool timing) {
  const std::string what = std::string(mode_name(s.cfg.mode)) + ", " + std::to_string(bytes) + " B";
  if (s.cfg.mode == Mode::Ring)
    progress::at(what + ", ring of " + std::to_string(s.size),
                 "ring neighbours rank " + std::to_string((s.rank + s.size - 1) % s.size) + " and rank " +
                     std::to_string((s.rank + 1) % s.size));
  else if (s.cfg.mode == Mode::Barrier)
    progress::at(std::string("barrier of ") + std::to_string(s.size) + " ranks", "all ranks of the barrier");
  else if (s.cfg.mode == Mode::Self)
    progress::at(what, "itself");
  else if (s.cfg.mode == Mode::MbwMr)
    progress::at(what, "rank " + std::to_string(s.rank < s.size / 2 ? s.rank + s.size / 2 : s.rank - s.size / 2));
  else
    progress::at(what, "rank " + std::to_string(1 - s.rank));
  Loop loop;
  loop.comm = s.comm;
  loop.counts = loop_counts(s.cfg, bytes);
  loop.timing = timing;
  loop.validate = s.cfg.validate;
  loop.clock_cost = s.clock_cost;
  loop.block = s.cfg.block;
  return loop;
}

std::unique_ptr<Buffer> message_buffer(const P2PConfig& cfg) {
  return make_buffer(cfg, std::size_t(cfg.max_size));
}

void PayloadCheck::prepare(Buffer& send, int me, long long iteration) const {
  send.fill(layout_, pattern_seed(me, iteration, size_));
  if (size_ == cfg_.corrupt_size && iteration == 0) send.corrupt(layout_, std::size_t(cfg_.corrupt_offset));
}

std::string PayloadCheck::verify(const Buffer& received, int from, int me, long long iteration) const {
  const auto bad = received.check(layout_, pattern_seed(from, iteration, size_));
  if (!bad) return "";
  return label_ + format("size %lld, offset %zu: expected 0x%02x, got 0x%02x (rank %d from rank %d, iteration %lld)",
                         size_, bad->offset, bad->expected, bad->got, me, from, iteration);
}

void note_tail(ModeOutput& out, const Stats& s, const std::string& what) {
  if (s.tail_ratio() > kNoiseTailRatio)
    out.noise.push_back(what + ": " + threshold_crossed("p95/median", s.tail_ratio(), kNoiseTailRatio, true));
  if (s.mean_ratio() > kNoiseMeanRatio)
    out.noise.push_back(what + ": " + threshold_crossed("mean/median", s.mean_ratio(), kNoiseMeanRatio, true));
}

void note_fit(ModeOutput& out, double r2, const std::string& what) {
  if (std::isfinite(r2) && r2 < kNoiseFitR2)
    out.noise.push_back(what + ": " + threshold_crossed("R^2", r2, kNoiseFitR2, false, 4));
}

void progress(const Session& s, std::size_t index, std::size_t count, const std::string& what) {
  events::start(static_cast<long long>(index), static_cast<long long>(count), what);
  if (s.rank == 0) std::cout << "[" << index << "/" << count << "] " << what << " ...\n" << std::flush;
}

Json repeats_json(ModeOutput& out, const std::string& what,
                  const std::vector<std::pair<std::string, const Pooled*>>& quantities, double factor) {
  Json j = Json::object();
  for (const auto& [name, pooled] : quantities) {
    std::vector<double> medians;
    for (double m : pooled->medians) medians.push_back(m * factor);
    const double spread = relative_spread(medians);
    Json q = Json::object();
    q["medians"] = Json::array_of(medians);
    q["spread"] = spread;
    j[name] = q;
    if (spread > kNoiseRepeatSpread)
      out.noise.push_back(what + " " + name + ": " +
                          threshold_crossed("repeat spread", spread, kNoiseRepeatSpread, true, 1, 100, "%"));
  }
  return j;
}

Json unphysical_json(const std::vector<Unphysical>& wrong) {
  Json j = Json::object();
  for (const auto& u : wrong) j[u.parameter] = u.reason;
  return j;
}

std::string fitted_text(const std::string& name, double value, const char* fmt, const std::vector<Unphysical>& wrong) {
  for (const auto& u : wrong)
    if (u.parameter == name) return name + " = -";
  return name + " = " + format(fmt, value);
}

namespace {

Json hockney_json(const HockneyFit& fit) {
  Json j = Json::object();
  Json segments = Json::array();
  for (const auto& s : fit.segments) {
    Json seg = Json::object();
    seg["min_size"] = static_cast<long long>(s.min_size);
    seg["max_size"] = static_cast<long long>(s.max_size);
    seg["alpha"] = s.alpha;
    seg["beta"] = s.beta;
    seg["r2"] = s.r2;
    const auto wrong = unphysical(s);
    if (!wrong.empty()) seg["unphysical"] = unphysical_json(wrong);
    segments.push(seg);
  }
  j["segments"] = segments;
  Json breaks = Json::array();
  for (double b : fit.breakpoints) breaks.push(static_cast<long long>(b));
  j["breakpoints"] = breaks;
  return j;
}

std::string hockney_text(const HockneyFit& fit, const std::string& what) {
  if (fit.segments.empty()) return "# Hockney fit: fewer than two sizes, none\n";
  std::string text = "# Hockney fit T(s) = alpha + s/beta of the " + what + ", per regime:\n";
  for (size_t i = 0; i < fit.segments.size(); ++i) {
    const auto& s = fit.segments[i];
    if (i > 0) text += format("#   breakpoint at %.0f B\n", fit.breakpoints[i - 1]);
    const std::string beta = std::isfinite(s.beta) ? format("%.1f MB/s", s.beta / 1e6) : "inf (flat)";
    const auto wrong = unphysical(s);
    text += format("#   %.0f .. %.0f B: %s, beta = %s, R^2 = %.4f\n", s.min_size, s.max_size,
                   fitted_text("alpha", s.alpha * 1e6, "%.3f us", wrong).c_str(), beta.c_str(), s.r2);
    for (const auto& u : wrong) text += "#   note: " + u.reason + "\n";
  }
  return text;
}

}  // namespace

Json& add_hockney(ModeOutput& out, const std::vector<double>& sizes, const std::vector<double>& times,
                  const std::string& what) {
  const HockneyFit fit = fit_hockney(sizes, times);
  out.table += hockney_text(fit, what);
  for (const auto& seg : fit.segments)
    note_fit(out, seg.r2, format("Hockney fit %.0f .. %.0f B", seg.min_size, seg.max_size));
  out.fits["hockney"] = hockney_json(fit);
  return out.fits["hockney"];
}

}  // namespace checkmpi::p2p
