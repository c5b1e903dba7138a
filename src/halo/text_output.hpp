// What checkmpi-halo prints and the per-rank task logs: CheckMPI's timing
// log, the run header, the results table.
#pragma once

#include <string>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/context.hpp"
#include "grid/config.hpp"
#include "grid/decomposition.hpp"
#include "halo/backend_choice.hpp"
#include "halo/result.hpp"

namespace checkmpi {

// Directions in which every rank is its own neighbour, and how those
// exchanges are done ("none", "x,z through MPI to the rank itself").
std::string self_exchange(const HaloConfig& cfg, const Decomposition& dec);

// OUTDIR/<id>/task.NNNNNN.log for this rank, from r's local timers and
// verdict, pending in `files`. Collective: a rank that cannot write makes
// every rank throw OutputError.
void write_task_log(const StrategyResult& r, const Decomposition& dec, const HaloConfig& cfg,
                    PendingFiles& files);

// Rank 0 only.
void print_header(const HaloConfig& cfg, const Decomposition& dec, const RunContext& ctx,
                  const std::vector<const StrategyInfo*>& chosen, const BackendChoice& backend);
void print_table(const std::vector<StrategyResult>& results, const std::vector<int>& group, const HaloConfig& cfg,
                 const RunContext& ctx);

// "step1, step4 and step7 are tied within 1.2% (fastest median 1.234 ms per
// step); next step0 is 18% slower (95% CI 15%-21%)", from rank_results; an
// oversubscribed run's group is every ranked strategy, said as not separated.
std::string ranking_headline(const std::vector<StrategyResult>& results, const std::vector<int>& group,
                             bool oversubscribed);

// "12.34 us", "1.234 ms", "1.234 s"; "-" for NaN.
std::string per_step_text(double seconds);

}  // namespace checkmpi
