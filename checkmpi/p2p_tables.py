"""Tables of checkmpi-p2p results, one builder per mode: adding a mode is
adding its builder here (and its plot in plots.py)."""

from __future__ import annotations

from checkmpi.results import Distribution, P2PRun, opt_float
from checkmpi.tables import Table, num, pair_text, pick_unit, range_text, x_join

US = 1e6
MBS = 1e-6


def p2p_tables(run: P2PRun, wide: bool = False) -> list[Table]:
    """The mode's table (a row per size), its fits, and the tool's noise
    warnings under the last; `wide`: every column (nbc), else 80 columns."""
    build = {"pingpong": _pingpong, "bw": _bw, "ring": _ring, "loggp": _loggp, "datatype": _datatype,
             "nbc": lambda r: _nbc(r, wide), "self": _self, "barrier": _barrier, "bibw": _bibw, "mbw-mr": _mbw_mr,
             "coll": _coll, "rma": _rma}[run.mode]
    tables = build(run)
    hockney = run.fits.get("hockney")
    if hockney and hockney.get("segments"):
        tables.append(hockney_table(run))
    if run.noise:
        last = tables[-1]
        last.caption = "\n".join(filter(None, [last.caption] + [f"warning: {w}" for w in run.noise]))
    return tables


def _stat(r: dict, key: str, stat: str) -> float:
    return opt_float(r[key].get(stat))


def _spread(r: dict, key: str, digits: int = 2) -> list[str]:
    """median, its 95% CI and p95 of a distribution, in microseconds."""
    d = Distribution.of(r[key])
    return [num(d.median * US, digits), range_text(d.ci, US, digits), num(d.p95 * US, digits)]


def _times(r: dict) -> list[str]:
    """median, 95% CI, p95, max and mean of a result's `latency`, in microseconds."""
    return _spread(r, "latency") + [num(_stat(r, "latency", k) * US, 2) for k in ("max", "mean")]


def _sized_times(title: str, caption: str, run: P2PRun) -> list[Table]:
    """A row per message size: its times and size / median time."""
    t = Table(title, ["Size (B)", "median", "95% CI", "p95", "max", "mean", "MB/s"], caption=caption)
    for r in run.results:
        t.rows.append([str(int(r["size"]))] + _times(r) + [num(opt_float(r["bandwidth"]) * MBS, 1)])
    return [t]


def _pingpong(run: P2PRun) -> list[Table]:
    threads = int(run.config.get("threads", 1))
    each = f", {threads} threads per rank" if threads > 1 else ""
    return _sized_times(f"{run.name}: ping-pong ({pair_text(run)}{each}), latency in us",
                        "latency: half round trip; median, its 95% CI and p95 over timed blocks"
                        + (" of every thread" if threads > 1 else "") + ", mean over all "
                        "iterations (OSU's figure); MB/s: size / median latency", run)


def _self(run: P2PRun) -> list[Table]:
    return _sized_times(f"{run.name}: self-exchange (rank 0 to itself through MPI), time in us",
                        "time of one MPI_Sendrecv to itself; median, its 95% CI and p95 over timed blocks, mean over "
                        "all iterations; MB/s: size / median time", run)


def _barrier(run: P2PRun) -> list[Table]:
    t = Table(f"{run.name}: MPI_Barrier latency in us", ["ranks", "median", "95% CI", "p95", "max", "mean"],
              caption="time per barrier, slowest rank; on the first N ranks of the job")
    for r in run.results:
        t.rows.append([str(int(r["nprocs"]))] + _times(r))
    return [t]


def _bw(run: P2PRun) -> list[Table]:
    t = Table(f"{run.name}: streaming bandwidth ({pair_text(run)}), time per window in us",
              ["Size (B)", "MB/s", "window", "median", "95% CI", "p95"],
              caption="MB/s: bytes over the total time, as OSU; median, 95% CI and p95 of the time per window")
    for r in run.results:
        t.rows.append([str(int(r["size"])), num(opt_float(r["bandwidth"]) * MBS, 1), str(r["window"])]
                      + _spread(r, "time"))
    return [t]


def _bibw(run: P2PRun) -> list[Table]:
    t = Table(f"{run.name}: bidirectional bandwidth ({pair_text(run)}), time per window in us",
              ["Size (B)", "MB/s", "window", "median", "95% CI", "p95"],
              caption="MB/s: both directions' bytes over the total time, as OSU's osu_bibw; median, 95% CI and p95 "
                      "of the time per window (a window each way at once)")
    for r in run.results:
        t.rows.append([str(int(r["size"])), num(opt_float(r["bandwidth"]) * MBS, 1), str(r["window"])]
                      + _spread(r, "time"))
    return [t]


def _mbw_mr(run: P2PRun) -> list[Table]:
    pairs = run.context.get("pairs") or []
    on_node = sum(1 for p in pairs if p.get("same_node"))
    t = Table(f"{run.name}: {len(pairs)} pair(s) at once (rank i to i + {len(pairs)}), time per window in us",
              ["Size (B)", "MB/s", "msgs/s", "median", "95% CI", "p95"],
              caption=f"MB/s and msgs/s: all pairs' bytes and messages over the total time, as OSU's osu_mbw_mr; "
                      f"each block timed at its slowest rank; pairs on one node: {on_node}, across nodes: "
                      f"{len(pairs) - on_node}")
    for r in run.results:
        t.rows.append([str(int(r["size"])), num(opt_float(r["bandwidth"]) * MBS, 1),
                       num(opt_float(r["message_rate"]), 0)] + _spread(r, "time"))
    return [t]


def _coll(run: P2PRun) -> list[Table]:
    """One table per collective: OSU's avg/min/max over ranks of each rank's mean."""
    out = []
    for op in dict.fromkeys(r["op"] for r in run.results):
        rows = [r for r in run.results if r["op"] == op]
        t = Table(f"{run.name}: {op} on {rows[0]['nprocs']} ranks, latency in us",
                  ["Size (B)", "avg", "min", "max", "median", "p95"],
                  caption="avg, min, max: over ranks of each rank's mean latency, as OSU prints them; median and "
                          "p95: over every rank's iterations")
        for r in rows:
            d = Distribution.of(r["latency"])
            t.rows.append([str(int(r["size"]))] + [num(opt_float(r[k]) * US, 2) for k in (
                "avg_latency", "min_latency", "max_latency")] + [num(d.median * US, 2), num(d.p95 * US, 2)])
        out.append(t)
    return out


def _rma(run: P2PRun) -> list[Table]:
    """One table per one-sided operation."""
    out = []
    for op in dict.fromkeys(r["op"] for r in run.results):
        rows = [r for r in run.results if r["op"] == op]
        t = Table(f"{run.name}: {op}, sync {rows[0]['sync']}, {rows[0]['window']} per epoch ({pair_text(run)}), us",
                  ["Size (B)", "median", "95% CI", "p95", "max", "mean", "MB/s"],
                  caption="time per epoch (its operations and their synchronisation) at the origin, rank 0; mean "
                          "over all iterations is OSU's figure; MB/s: size x operations per epoch over the total time")
        for r in rows:
            t.rows.append([str(int(r["size"]))] + _times(r) + [num(opt_float(r["bandwidth"]) * MBS, 1)])
        out.append(t)
    return out


def _ring(run: P2PRun) -> list[Table]:
    t = Table(f"{run.name}: ring exchange, time per iteration in us",
              ["ranks", "Size (B)", "median", "95% CI", "p95", "max"],
              caption="time per ring iteration, slowest rank (every rank sends to both neighbours)")
    for r in run.results:
        t.rows.append([str(int(r["nprocs"])), str(int(r["size"]))] + _spread(r, "time")
                      + [num(_stat(r, "time", "max") * US, 2)])
    return [t]


def _loggp(run: P2PRun) -> list[Table]:
    n = run.fits.get("loggp", {}).get("n", run.config.get("n", "n"))
    t = Table(f"{run.name}: LogGP measurements ({pair_text(run)}), microseconds",
              ["Size (B)", "PRTT(1,0)", f"PRTT({n},0)", f"PRTT({n},d)", "o_s", "o_r", "g+G*s"])
    for r in run.results:
        t.rows.append([str(int(r["size"]))] + [num(float(r.get(k, float("nan"))) * US, 3) for k in (
            "prtt_1_0", "prtt_n_0", "prtt_n_d", "o_s", "o_r", "g_plus_Gs")])
    tables = [t]
    fit = run.fits.get("loggp")
    if fit:
        wrong = fit.get("unphysical") or {}
        p = Table(f"{run.name}: LogGP parameters", ["L (us)", "o_s (us)", "o_r (us)", "g (us)", "G (ns/B)", "R^2"],
                  left_columns=0, caption="\n".join([*unphysical_notes(wrong)]
                                                    + [f"warning: {w}" for w in fit.get("warnings", [])]))
        p.rows.append([fitted(fit, k, US, 3) for k in ("L", "o_s", "o_r", "g")]
                      + [fitted(fit, "G", 1e9, 4), num(float(fit.get("r2", float("nan"))), 4)])
        tables.append(p)
    return tables


def fitted(fit: dict, key: str, scale: float, digits: int) -> str:
    """A fitted parameter, or '-' where checkmpi-p2p found it outside its physical range."""
    return "-" if key in (fit.get("unphysical") or {}) else num(opt_float(fit.get(key)) * scale, digits)


def unphysical_notes(wrong: dict[str, str]) -> list[str]:
    """The reasons checkmpi-p2p gives for the values shown as '-'."""
    return [f"- for {key}: {reason}" for key, reason in wrong.items()]


def _datatype(run: P2PRun) -> list[Table]:
    t = Table(f"{run.name}: MPI_Type_vector vs hand packing ({pair_text(run)}), us",
              ["count", "blocklen", "stride", "bytes", "contig", "type", "packed", "extra"],
              left_columns=0,
              caption="half round trip, medians: vector datatype (type) vs hand pack + contiguous send of the "
                      "same bytes (packed); extra = type - packed")
    for r in run.results:
        t.rows.append([str(r["count"]), str(r["blocklen"]), str(r["stride"]), str(int(r["bytes"])),
                       "yes" if r["contiguous"] else "no", num(_stat(r, "datatype", "median") * US, 3),
                       num(_stat(r, "packed", "median") * US, 3), num(opt_float(r["overhead"]) * US, 3)])
    tables = [t]
    fit = run.fits.get("datatype")
    if fit:
        f = Table(f"{run.name}: datatype overhead fit", ["O (ns/B)", "o (us)", "R^2"], left_columns=0)
        f.rows.append([num(opt_float(fit.get("O")) * 1e9, 4), num(opt_float(fit.get("o")) * US, 3),
                       num(opt_float(fit.get("r2")), 4)])
        tables.append(f)
    return tables


# OSU's columns (osu_ialltoall prints size, overall, compute, pure comm and
# overlap), the blocking twin beside them; --wide adds the parts of overall.
NBC_COLUMNS = ("blocking", "pure comm", "compute", "overall")
NBC_WIDE_COLUMNS = ("blocking", "pure comm", "compute", "init", "MPI_Test", "MPI_Wait", "overall")


def nbc_means(r: dict) -> dict[str, float]:
    """OSU's figures (seconds, means over iterations, ranks and runs) by
    column name; compute without its MPI_Test calls, as OSU prints it."""
    mean = {k: _stat(r, k, "mean") for k in ("blocking", "pure_comm", "compute", "init", "test", "wait", "overall")}
    return {"blocking": mean["blocking"], "pure comm": mean["pure_comm"], "compute": mean["compute"] - mean["test"],
            "init": mean["init"], "MPI_Test": mean["test"], "MPI_Wait": mean["wait"], "overall": mean["overall"]}


def _nbc(run: P2PRun, wide: bool) -> list[Table]:
    """One OSU-style table per operation (pencil: per transpose)."""
    note = (run.context.get("progress_thread") or {}).get("note", "not recorded")
    columns = NBC_WIDE_COLUMNS if wide else NBC_COLUMNS
    out = []
    for op in dict.fromkeys(r["op"] for r in run.results):
        rows = [r for r in run.results if r["op"] == op]
        pencil = "grid" in rows[0]
        unit, scale = pick_unit(max(max(nbc_means(r).values()) for r in rows))
        lead = ["grid", "Bytes"] if pencil else ["Size (B)"]
        where = (f"{op} transpose on {x_join(rows[0]['pencil'])} pencils (MPI_Ialltoallv over {rows[0]['comm_size']} "
                 "ranks)" if pencil else f"{op} on {rows[0]['nprocs']} ranks")
        t = Table(f"{run.name}: {where}, times in {unit}", lead + ["MPI_Test calls" if wide else "tests"]
                  + list(columns) + ["overlap (%)"], left_columns=len(lead),
                  caption=("means over iterations, ranks and runs, as OSU; " + ("" if wide else "tests: MPI_Test calls "
                           "during the compute; ") + "compute: the compute phase without its MPI_Test calls, run for "
                           "each rank's mean pure comm time; overall = init + compute + MPI_Test + MPI_Wait; "
                           "overlap = max(0, 100 - (overall - compute) / pure comm x 100)"
                           + ("; Bytes: the most one rank sends" if pencil else "")
                           + ("" if wide else "; --wide for init, MPI_Test and MPI_Wait")
                           + f"\nprogress thread: {note}"))
        for r in rows:
            first = [x_join(r["grid"]), str(int(r["size"]))] if pencil else [str(int(r["size"]))]
            means = nbc_means(r)
            t.rows.append(first + [str(int(r["tests"]))] + [num(means[c] * scale, 2) for c in columns]
                          + [num(opt_float(r.get("overlap")), 1)])
        out.append(t)
    return out


def hockney_table(run: P2PRun) -> Table:
    fit = run.fits["hockney"]
    t = Table(f"{run.name}: Hockney fit T(s) = alpha + s/beta", ["segment", "sizes (B)", "alpha (us)",
              "beta (MB/s)", "R^2"], left_columns=2,
              caption="breakpoints (B): " + (", ".join(str(int(b)) for b in fit.get("breakpoints", [])) or "none"))
    for i, s in enumerate(fit["segments"]):
        t.rows.append([str(i + 1), f"{int(s['min_size'])}-{int(s['max_size'])}", fitted(s, "alpha", US, 3),
                       num(opt_float(s["beta"]) * MBS, 1), num(opt_float(s.get("r2")), 4)])
        t.caption += "".join(f"\nsegment {i + 1}: {note}" for note in unphysical_notes(s.get("unphysical") or {}))
    return t
