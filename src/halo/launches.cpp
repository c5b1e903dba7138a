#include "halo/launches.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>

#include "core/atomic_file.hpp"
#include "core/errors.hpp"
#include "core/samples.hpp"
#include "strategies/strategy.hpp"

namespace checkmpi {

namespace {

// "step2, step7" (ids only: the rows are long).
std::string ids(const Json& strategies) {
  std::string out;
  for (const Json& s : strategies.items()) {
    const Json* id = s.find("id");
    out += (out.empty() ? "" : ", ") + (id ? id->string() : s.dump(0));
  }
  return out.empty() ? "none" : out;
}

// "procs [2,1,1], this run [1,2,1]" for the first key whose value differs.
std::string first_difference(const Json& theirs, const Json& ours) {
  const Json* a = theirs.find("strategies");
  const Json* b = ours.find("strategies");
  if (a && b && *a != *b) {
    if (ids(*a) != ids(*b)) return "strategies " + ids(*a) + ", this run " + ids(*b);
    for (std::size_t i = 0; i < a->items().size(); ++i)
      if (a->items()[i] != b->items()[i]) {
        const Json* id = b->items()[i].find("id");
        return "strategy " + (id ? id->string() : std::to_string(i + 1)) +
               " is composed otherwise (another checkmpi version?)";
      }
  }
  for (const char* key : {"nprocs", "procs", "local", "precision", "reverse", "sync", "self_copy", "backend",
                          "compute", "border", "strategies"}) {
    const Json* a = theirs.find(key);
    const Json* b = ours.find(key);
    if (!a || !b || *a != *b) {
      std::string was = a ? a->dump(0) : "nothing";
      std::string is = b ? b->dump(0) : "nothing";
      if (was.size() > 120) was = was.substr(0, 117) + "...";
      if (is.size() > 120) is = is.substr(0, 117) + "...";
      return std::string(key) + " " + was + ", this run " + is;
    }
  }
  return "";
}

std::vector<double> numbers(const Json& array) {
  std::vector<double> out;
  for (const Json& v : array.items()) {
    if (!v.is_number() || !(v.number() > 0) || !std::isfinite(v.number())) throw std::runtime_error("a step time");
    out.push_back(v.number());
  }
  return out;
}

Launch parse_launch(const Json& j, std::size_t strategies) {
  Launch l;
  const Json* date = j.find("date");
  const Json* seed = j.find("seed");
  const Json* list = j.find("strategies");
  if (!date || !seed || !list || !seed->is_number() || list->items().size() != strategies)
    throw std::runtime_error("a launch");
  l.date = date->string();
  l.seed = static_cast<unsigned long long>(seed->integer());
  for (const Json& s : list->items()) {
    const Json* rounds = s.find("rounds");
    const Json* sum = s.find("step_sum");
    const Json* count = s.find("step_count");
    if (!rounds || !sum || !count || !sum->is_number() || !count->is_number()) throw std::runtime_error("a strategy");
    l.rounds.emplace_back();
    for (const Json& round : rounds->items()) l.rounds.back().push_back(numbers(round));
    l.step_sum.push_back(sum->number());
    l.step_count.push_back(count->number());
  }
  return l;
}

}  // namespace

Json launch_fingerprint(const HaloConfig& cfg, const Decomposition& dec, BackendKind backend,
                        const std::vector<const StrategyInfo*>& chosen) {
  Json f = Json::object();
  f["nprocs"] = dec.size;
  f["procs"] = Json::array_of(std::vector<int>(dec.dims.begin(), dec.dims.end()));
  f["local"] = Json::array_of(std::vector<long long>{dec.grid.l, dec.grid.m, dec.grid.n});
  f["precision"] = precision_name(cfg.precision);
  f["reverse"] = cfg.reverse;
  f["sync"] = sync_name(cfg.sync);
  f["self_copy"] = cfg.self_copy;
  f["backend"] = backend_name(backend);
  f["compute"] = compute_name(cfg.compute);
  f["border"] = cfg.border;
  Json strategies = Json::array();
  for (const StrategyInfo* s : chosen) strategies.push(catalog_row_json(*s));
  f["strategies"] = strategies;
  return f;
}

std::vector<Launch> read_launches(const std::string& path, const Json& fingerprint) {
  const std::string writable = check_writable_file(path, "samples file");
  if (!writable.empty()) throw UsageError("--samples: " + writable);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) return {};  // the first launch
  const std::string text = read_text_file(path, "samples file", 1LL << 30, "the 1 GiB a samples file may have");
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const std::runtime_error& e) {
    throw UsageError("--samples '" + path + "': not JSON (" + e.what() + ")");
  }
  const Json* schema = doc.find("schema");
  if (!schema || schema->string() != kSamplesSchema)
    throw UsageError("--samples '" + path + "': not a " + kSamplesSchema + " file (schema " +
                     (schema ? schema->dump(0) : std::string("missing")) + ")");
  const Json* theirs = doc.find("fingerprint");
  const std::string difference = theirs ? first_difference(*theirs, fingerprint) : "fingerprint missing";
  if (!difference.empty())
    throw UsageError("--samples '" + path + "' holds another run's launches: " + difference +
                     " (a new run needs a new samples file)");
  std::vector<Launch> out;
  const Json* launches = doc.find("launches");
  try {
    if (!launches) throw std::runtime_error("launches");
    for (const Json& l : launches->items()) out.push_back(parse_launch(l, fingerprint.find("strategies")->items().size()));
  } catch (const std::runtime_error& e) {
    throw UsageError("--samples '" + path + "': launch " + std::to_string(out.size() + 1) + ": bad " + e.what());
  }
  return out;
}

void add_launches(std::vector<StrategyResult>& results, const std::vector<Launch>& earlier) {
  for (std::size_t i = 0; i < results.size(); ++i) {
    StrategyResult& r = results[i];
    r.launches.clear();
    for (const Launch& l : earlier) {
      r.launches.push_back(l.rounds[i]);
      for (const auto& round : l.rounds[i]) r.pooled.insert(r.pooled.end(), round.begin(), round.end());
      r.earlier_step_sum += l.step_sum[i];
      r.earlier_step_count += l.step_count[i];
    }
    std::vector<std::vector<double>> mine;  // this launch: the rounds of all its runs
    if (r.valid)
      for (const auto& run : r.rounds) mine.insert(mine.end(), run.begin(), run.end());
    r.launches.push_back(std::move(mine));
    r.launch_medians.clear();
    for (const auto& launch : r.launches) {
      std::vector<double> all;
      for (const auto& round : launch) all.insert(all.end(), round.begin(), round.end());
      r.launch_medians.push_back(distribution(all).median);
    }
  }
}

Launch this_launch(const std::vector<StrategyResult>& results, const std::string& date, unsigned long long seed) {
  Launch l;
  l.date = date;
  l.seed = seed;
  for (const StrategyResult& r : results) {
    l.rounds.emplace_back();
    if (r.valid && !r.launches.empty())
      for (const auto& round : r.launches.back()) l.rounds.back().push_back(thinned(round));
    l.step_sum.push_back(r.valid ? r.step_sum : 0.0);
    l.step_count.push_back(r.valid ? r.step_count : 0.0);
  }
  return l;
}

Json samples_json(const Json& fingerprint, const std::vector<Launch>& launches) {
  Json doc = Json::object();
  doc["schema"] = kSamplesSchema;
  doc["fingerprint"] = fingerprint;
  Json list = Json::array();
  for (const Launch& l : launches) {
    Json j = Json::object();
    j["date"] = l.date;
    j["seed"] = l.seed;
    Json strategies = Json::array();
    for (std::size_t i = 0; i < l.rounds.size(); ++i) {
      Json s = Json::object();
      s["step_sum"] = l.step_sum[i];
      s["step_count"] = l.step_count[i];
      Json rounds = Json::array();
      for (const auto& round : l.rounds[i]) rounds.push(Json::array_of(round));
      s["rounds"] = rounds;
      strategies.push(s);
    }
    j["strategies"] = strategies;
    list.push(j);
  }
  doc["launches"] = list;
  return doc;
}

}  // namespace checkmpi
