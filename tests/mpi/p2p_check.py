#!/usr/bin/env python3
"""p2p_check.py FILE MODE NPROCS [flat-ok]: checks a checkmpi-p2p JSON file
(schema checkmpi.p2p/2) for MODE run on NPROCS ranks; prints what is wrong,
exits 1. flat-ok: a Hockney segment may have beta null (time not growing with
size), which is what ranks oversubscribing the cores measure, and LogGP's G
may be <= 0 if the tool calls it unphysical (device buffers staged through one
GPU that several ranks share: every copy waits for a time slice, and that
noise can swamp G's few microseconds per 64 KiB on a loaded machine).
In self mode a segment that ends below 8 KiB may be flat whatever the flag:
copying 4 KiB within a process costs tens of nanoseconds, less than the
call's own spread (one CI run of MPICH fitted 1 .. 4096 B flat)."""
import json
import math
import sys

path, mode, nprocs = sys.argv[1], sys.argv[2], int(sys.argv[3])
flat_ok = sys.argv[4:] == ["flat-ok"]
doc = json.load(open(path))
problems = []


def need(cond, what):
    if not cond:
        problems.append(what)
    return cond


def close(value, *terms):
    """value equals the sum of terms, up to the 9 digits JSON keeps of each."""
    if value is None or any(t is None for t in terms):
        return False
    scale = max(abs(t) for t in terms + (value,))
    return abs(value - sum(terms)) <= 1e-7 * scale


def finite(x):
    return isinstance(x, (int, float)) and math.isfinite(x)


def stats_ok(s, what):
    keys = ["n", "min", "p5", "median", "mean", "p95", "max", "median_ci"]
    if not need(isinstance(s, dict) and list(s) == keys, f"{what}: keys {s}"):
        return
    need(isinstance(s["n"], int) and s["n"] >= 1, f"{what}: n {s['n']}")
    need(all(finite(s[k]) and s[k] > 0 for k in keys[1:7]), f"{what}: not all positive: {s}")
    need(s["min"] <= s["p5"] <= s["median"] <= s["p95"] <= s["max"], f"{what}: percentiles out of order: {s}")
    ci = s["median_ci"]
    need((ci is None and s["n"] < 6) or (ci[0] <= s["median"] <= ci[1]), f"{what}: median_ci {ci}")
    need(s["min"] * (1 - 1e-9) <= s["mean"] <= s["max"] * (1 + 1e-9), f"{what}: mean outside [min, max]: {s}")


def powers(lo, hi):
    sizes, s = [], lo
    while s <= hi:
        sizes.append(s)
        s = 1 if s == 0 else 2 * s
    return sizes


def iterations_for(size):
    return cfg["iterations"] if size <= cfg["large_threshold"] else cfg["iterations_large"]


def hockney_ok(h, sizes):
    segs = h["segments"]
    if not need(segs, "hockney: no segments"):
        return
    need(segs[0]["min_size"] == sizes[0] and segs[-1]["max_size"] == sizes[-1], "hockney: segments do not span sizes")
    need(h["breakpoints"] == [s["min_size"] for s in segs[1:]], "hockney: breakpoints are not segment starts")
    for a, b in zip(segs, segs[1:]):
        need(sizes.index(b["min_size"]) == sizes.index(a["max_size"]) + 1, "hockney: segments not adjacent")
    for s in segs:
        keys = ["min_size", "max_size", "alpha", "beta", "r2"] + (["unphysical"] if s["alpha"] == 0 else [])
        need(list(s) == keys, f"hockney segment keys {list(s)}")
        need(finite(s["alpha"]) and s["alpha"] >= 0, f"hockney: alpha {s['alpha']} < 0")
        need(s["alpha"] > 0 or list(s["unphysical"]) == ["alpha"], "hockney: alpha 0 not called unphysical")
        may_be_flat = flat_ok or (mode == "self" and s["max_size"] < 8192)
        need((may_be_flat and s["beta"] is None) or (finite(s["beta"]) and s["beta"] > 0),
             f"hockney: beta {s['beta']} not > 0")
        need(s["r2"] is None or s["r2"] <= 1 + 1e-9, f"hockney: r2 {s['r2']}")


need(list(doc) == ["schema", "context", "config", "mode", "results", "fits", "noise", "valid", "error"],
     f"top-level keys {list(doc)}")
need(doc["valid"] is True and doc["error"] is None, "valid/error of a clean run")
need(doc["schema"] == "checkmpi.p2p/2", "schema")
need(all(isinstance(w, str) for w in doc["noise"]), "noise")
need(doc["mode"] == mode and doc["config"]["mode"] == mode, "mode")
ctx, cfg, results, fits = doc["context"], doc["config"], doc["results"], doc["fits"]
halo_keys = ["tool", "version", "git_revision", "date", "mpi_library", "mpi_standard", "nprocs", "nodes",
             "ranks_per_node", "hostnames", "timer_resolution"]
need(list(ctx)[:len(halo_keys)] == halo_keys, f"context keys {list(ctx)}")
need(ctx["tool"] == "checkmpi-p2p" and ctx["nprocs"] == nprocs, "context tool/nprocs")
placement = ctx["placement"]
need([p["rank"] for p in placement] == list(range(nprocs)), "placement ranks")
for p in placement:
    need(p["hostname"] == ctx["hostnames"][p["rank"]] and isinstance(p["cpu"], int) and p["cpu"] >= -1
         and isinstance(p["node"], int), f"placement entry {p}")
taking_part = nprocs if mode in ("ring", "nbc", "barrier", "mbw-mr", "coll") else 1 if mode == "self" else 2
if taking_part == 2:
    need(ctx["same_node"] == (placement[0]["node"] == placement[1]["node"]), "same_node")
else:
    need(ctx["same_node"] is None, "same_node should be null with more than 2 ranks")
for key in ["mode", "buffer", "validate", "min_size", "max_size", "iterations", "warmup", "iterations_large",
            "warmup_large", "large_threshold", "window", "n"]:
    need(key in cfg, f"config lacks {key}")
need(cfg["buffer"] in ("host", "cuda"), "buffer")
if "mpi_buffers" in cfg:
    need(cfg["mpi_buffers"] == "host" if cfg["buffer"] == "host" else cfg["mpi_buffers"] in ("device", "staged"),
         f"mpi_buffers {cfg['mpi_buffers']} with buffer {cfg['buffer']}")
    need((cfg["gpu"] is None) == (cfg["buffer"] == "host"), f"gpu {cfg['gpu']}")
need(results, "no results")
if mode == "nbc":
    pt = ctx["progress_thread"]
    need(list(pt) == ["requested", "setting", "covers", "active", "thread_level", "note"], f"progress_thread {pt}")
    need(pt["requested"] == cfg["progress_thread"], "progress_thread.requested != config")
    need(pt["thread_level"] in ("MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED",
                                "MPI_THREAD_MULTIPLE"), f"thread_level {pt['thread_level']}")
    need(not pt["active"] or pt["setting"] is not None, "active without a setting")
sizes = powers(cfg["min_size"], cfg["max_size"])

if mode in ("pingpong", "bw", "loggp", "self", "bibw", "mbw-mr"):
    need([r["size"] for r in results] == sizes, f"sizes {[r['size'] for r in results]} != {sizes}")
if mode in ("pingpong", "self"):
    threads = cfg.get("threads", 1)
    need(mode == "self" or isinstance(threads, int) and threads >= 1, f"threads {threads}")
    if threads > 1:
        need(ctx["thread_level"] == "MPI_THREAD_MULTIPLE", f"thread_level {ctx.get('thread_level')}")
    for r in results:
        # the threads share a size's iterations as osu_latency_mt deals them (i to thread i mod T), one at least each
        n = iterations_for(r["size"])
        need(r["iterations"] == max(n, threads), f"iterations at {r['size']}")
        if threads > 1:
            pt = r["per_thread"]
            need([t["thread"] for t in pt] == list(range(threads)), f"per_thread at {r['size']}: {pt}")
            shares = [max(1, (n - t + threads - 1) // threads) for t in range(threads)]
            need([t["iterations"] for t in pt] == shares, f"per_thread iterations at {r['size']}: {pt}")
            need(all(finite(t["median"]) and t["median"] > 0 for t in pt), f"per_thread medians at {r['size']}")
            # the mean over all iterations is the threads' means weighted by their iterations
            need(close(r["latency"]["mean"], *[t["mean"] * t["iterations"] / r["iterations"] for t in pt]),
                 f"per_thread means at {r['size']}")
        else:
            need("per_thread" not in r, "per_thread without --threads")
        stats_ok(r["latency"], f"latency at {r['size']}")
        need(close(r["bandwidth"], r["size"] / r["latency"]["median"]), f"bandwidth at {r['size']}")
    hockney_ok(fits["hockney"], sizes)
elif mode == "barrier":
    want = [p for p in (2 ** k for k in range(1, 20)) if p < nprocs] + [nprocs]
    need(cfg["ranks"] == want, f"config ranks {cfg['ranks']} != {want}")
    need([r["nprocs"] for r in results] == want, f"barrier nprocs {[r['nprocs'] for r in results]}")
    for r in results:
        need(r["iterations"] == cfg["iterations"], f"barrier of {r['nprocs']}: iterations")
        stats_ok(r["latency"], f"barrier of {r['nprocs']}")
    need(fits == {}, f"barrier fits {fits}")
elif mode == "bw":
    for r in results:
        need(r["window"] == cfg["window"], "window")
        stats_ok(r["time"], f"time at {r['size']}")
        # bandwidth = bytes over total time; time.mean = total / iterations
        need(close(r["bandwidth"], r["size"] * r["window"] / r["time"]["mean"]), f"bandwidth at {r['size']}")
    hockney_ok(fits["hockney"], sizes)
elif mode in ("bibw", "mbw-mr"):
    pairs = nprocs // 2 if mode == "mbw-mr" else 1
    per_iteration = 2 if mode == "bibw" else pairs  # messages of a window: both ways, or every pair
    if mode == "mbw-mr":
        want = [{"sender": i, "receiver": i + pairs, "same_node": placement[i]["node"] == placement[i + pairs]["node"]}
                for i in range(pairs)]
        need(ctx["pairs"] == want, f"pairs {ctx.get('pairs')} != {want}")
    for r in results:
        need(r["window"] == cfg["window"] and r["iterations"] == iterations_for(r["size"]), f"window/iterations {r}")
        stats_ok(r["time"], f"time at {r['size']}")
        need(close(r["bandwidth"], per_iteration * r["size"] * r["window"] / r["time"]["mean"]),
             f"bandwidth at {r['size']}")
        if mode == "mbw-mr":
            need(r["pairs"] == pairs, f"pairs at {r['size']}")
            need(close(r["message_rate"], pairs * r["window"] / r["time"]["mean"]), f"message_rate at {r['size']}")
    if mode == "bibw":
        hockney_ok(fits["hockney"], sizes)
    else:
        need(fits == {}, f"mbw-mr fits {fits}")
elif mode == "coll":
    expected = []
    for op in cfg["ops"]:
        if op == "barrier":
            expected.append((op, 0))
        else:
            expected += [(op, s) for s in sizes if s > 0 and (op not in ("allreduce", "reduce-scatter") or s % 4 == 0)]
    got = [(r["op"], r["size"]) for r in results]
    need(got == expected, f"coll results {got} != {expected}")
    for r in results:
        what = f"{r['op']} {r['size']} B"
        runs = cfg["repeat"]
        need(r["nprocs"] == nprocs and r["iterations"] == iterations_for(r["size"]) * runs, f"{what}: iterations")
        stats_ok(r["latency"], what)
        need(r["latency"]["n"] == r["iterations"] * nprocs, f"{what}: n is not iterations x ranks")
        need(0 < r["min_latency"] <= r["avg_latency"] * (1 + 1e-9) and r["avg_latency"] <= r["max_latency"] * (1 + 1e-9),
             f"{what}: min/avg/max over ranks {r['min_latency']} {r['avg_latency']} {r['max_latency']}")
        if runs == 1:  # the average of the ranks' means is the mean of every iteration
            need(close(r["avg_latency"], r["latency"]["mean"]), f"{what}: avg != mean")
    need(fits == {}, f"coll fits {fits}")
elif mode == "rma":
    need(cfg["sync"] in ("fence", "pscw", "lock", "lock-all", "flush"), f"sync {cfg.get('sync')}")
    need(all(op in ("put", "get", "acc") for op in cfg["ops"]), f"ops {cfg['ops']}")
    got = [(r["op"], r["size"]) for r in results]
    need(got == [(op, s) for op in cfg["ops"] for s in sizes], f"rma results {got}")
    for r in results:
        what = f"{r['op']} {r['size']} B"
        need(r["sync"] == cfg["sync"] and r["window"] == cfg["window"], f"{what}: sync/window")
        need(r["iterations"] == iterations_for(r["size"]), f"{what}: iterations")
        stats_ok(r["latency"], what)
        need(close(r["bandwidth"], r["size"] * r["window"] / r["latency"]["mean"]), f"{what}: bandwidth")
    need(fits == {}, f"rma fits {fits}")
elif mode == "ring":
    need(cfg["ranks"] == list(range(2, nprocs + 1)), "config ranks")
    for p in cfg["ranks"]:
        rows = [r for r in results if r["nprocs"] == p]
        need([r["size"] for r in rows] == sizes, f"ring of {p}: sizes {[r['size'] for r in rows]}")
        for r in rows:
            stats_ok(r["time"], f"ring {p} size {r['size']}")
    need([r["nprocs"] for r in results] == sorted(r["nprocs"] for r in results), "nprocs not ascending")
    need(fits["hockney"]["nprocs"] == nprocs, "hockney nprocs")
    hockney_ok(fits["hockney"], sizes)
elif mode == "loggp":
    n = cfg["n"]
    for r in results:
        need(list(r)[:8] == ["size", "prtt_1_0", "prtt_n_0", "prtt_n_d", "d", "o_s", "o_r", "g_plus_Gs"],
             f"loggp keys {list(r)}")
        need(all(finite(r[k]) for k in list(r)[1:8]), f"loggp values not finite at {r['size']}")
        need(r["d"] == r["prtt_1_0"], "d != prtt_1_0")
        need(close(r["g_plus_Gs"], r["prtt_n_0"] / (n - 1), -r["prtt_1_0"] / (n - 1)), f"g_plus_Gs at {r['size']}")
        need(close(r["o_s"], r["prtt_n_d"] / (n - 1), -r["prtt_1_0"] / (n - 1), -r["d"]), f"o_s at {r['size']}")
        need(r["prtt_1_0"] > 0 and r["prtt_n_0"] > 0 and r["prtt_n_d"] > r["prtt_1_0"], f"PRTT at {r['size']}")
    f = fits["loggp"]
    wrong = [k for k in ["L", "o_s", "o_r", "g", "G"] if finite(f[k]) and f[k] <= 0]  # not physical: named, why
    need(list(f) == ["n", "L", "o_s", "o_r", "g", "G", "r2", "residuals", "warnings"] + (["unphysical"] if wrong
                                                                                         else []),
         f"loggp fit keys {list(f)}")
    need(list(f.get("unphysical", {})) == wrong, f"unphysical {f.get('unphysical')} but values <= 0: {wrong}")
    need(all(v.startswith(f"{k} = ") for k, v in f.get("unphysical", {}).items()), "unphysical reasons")
    need(f["n"] == n, "fit n")
    need(all(finite(f[k]) for k in ["L", "o_s", "o_r", "g", "G"]), f"LogGP not finite: {f}")
    need(f["G"] > 0 or (flat_ok and "G" in f.get("unphysical", {})), f"G = {f['G']} not > 0 and not called unphysical")
    need(f["g"] >= 0, f"g = {f['g']} < 0")
    need([x["size"] for x in f["residuals"]] == sizes, "residual sizes")
    need(all(finite(x["residual"]) for x in f["residuals"]), "residuals not finite")
    need(isinstance(f["warnings"], list), "warnings")
elif mode == "datatype":
    tuples = [(r["count"], r["blocklen"], r["stride"]) for r in results]
    need(tuples == [(v["count"], v["blocklen"], v["stride"]) for v in cfg["vectors"]], "results != config vectors")
    for r in results:
        t = (r["count"], r["blocklen"], r["stride"])
        need(r["bytes"] == r["count"] * r["blocklen"] * 4, f"bytes of {t}")
        need(r["contiguous"] == (r["count"] == 1 or r["blocklen"] == r["stride"]), f"contiguous of {t}")
        stats_ok(r["datatype"], f"datatype {t}")
        stats_ok(r["packed"], f"packed {t}")
        need(close(r["overhead"], r["datatype"]["median"], -r["packed"]["median"]), f"overhead of {t}")
    need(any(r["contiguous"] for r in results) and not all(r["contiguous"] for r in results),
         "sweep lacks contiguous or non-contiguous tuples")
    if cfg["default_sweep"]:
        for t in [(2, 4, 4), (2, 2, 4)]:
            need(t in tuples, f"default sweep lacks {t}")
        need(any(c == 1 for c, _, _ in tuples), "default sweep lacks (1, X, Y)")
        for b in {bl for _, bl, _ in tuples}:
            group = [r["bytes"] for r in results if r["blocklen"] == b]
            need(group == sorted(group) and len(set(group)) == len(group), f"blocklen {b}: bytes not ascending")
    f = fits["datatype"]
    need(list(f)[:3] == ["O", "o", "r2"] and finite(f["O"]) and finite(f["o"]), f"datatype fit {f}")

elif mode == "nbc":
    def parts(n, p):
        """2DECOMP's distribute(): n // p each, the last n % p parts one more."""
        return [n // p + (1 if i >= p - n % p else 0) for i in range(p)]

    progress = cfg["progress"]
    expected = []  # (op, size, tests) in the order measured
    if cfg["pencil"] is None:
        need(cfg["grids"] == [], "grids without --pencil")
        for op in cfg["ops"]:
            for size in sizes:
                if op != "iallreduce" or size % 4 == 0:
                    expected += [(op, size, n) for n in progress]
    else:
        P, Q = cfg["pencil"]
        need(P * Q == nprocs and cfg["ops"] == ["x_to_y", "y_to_z"], f"pencil {cfg['pencil']}, ops {cfg['ops']}")
        for nx, ny, nz in cfg["grids"]:
            # bytes a rank sends: its whole input pencil (X for x_to_y, Y for y_to_z)
            x2y = [8 * nx * a * b for a in parts(ny, P) for b in parts(nz, Q)]
            y2z = [8 * ny * a * b for a in parts(nx, P) for b in parts(nz, Q)]
            for op, sent, comm in (("x_to_y", x2y, P), ("y_to_z", y2z, Q)):
                expected += [(op, max(sent), n) for n in progress]
                for r in results:
                    if r["op"] == op and r["grid"] == [nx, ny, nz]:
                        need(r["bytes"] == {"min": min(sent), "max": max(sent)}, f"{op} {nx}x{ny}x{nz}: bytes {r['bytes']}")
                        need(r["comm_size"] == comm and r["pencil"] == [P, Q], f"{op}: comm_size/pencil")
    got = [(r["op"], r["size"], r["tests"]) for r in results]
    need(got == expected, f"results {got} != expected {expected}")
    for r in results:
        what = f"{r['op']} size {r['size']} tests {r['tests']}"
        runs = cfg["repeat"]
        need(r["nprocs"] == nprocs and r["iterations"] == iterations_for(r["size"]) * runs,
             f"{what}: nprocs/iterations")
        for key in ("blocking", "pure_comm", "compute_target", "init", "compute", "wait", "overall"):
            stats_ok(r[key], f"{what}: {key}")
        # every iteration of every rank and run; the targets: one per rank and run
        need(all(r[k]["n"] == r["iterations"] * nprocs for k in ("blocking", "pure_comm", "overall")),
             f"{what}: n is not iterations x ranks")
        need(r["compute_target"]["n"] == nprocs * runs, f"{what}: compute_target n {r['compute_target']['n']}")
        t = r["test"]
        if r["tests"] == 0:  # no MPI_Test call: every sample is zero
            need(all(t[k] == 0 for k in ("min", "p5", "median", "mean", "p95", "max")), f"{what}: test time {t}")
        else:
            stats_ok(t, f"{what}: test")
        need(sorted(r["repeats"]) == ["blocking", "overall", "pure_comm"]
             and all(len(q["medians"]) == runs for q in r["repeats"].values()), f"{what}: repeats {r['repeats']}")
        # overall = init + compute (with its tests) + wait, iteration by iteration
        need(close(r["overall"]["mean"], r["init"]["mean"], r["compute"]["mean"], r["wait"]["mean"]),
             f"{what}: overall != init + compute + wait")
        # each rank computes for its own mean pure communication time, and at least that long
        need(close(r["compute_target"]["mean"], r["pure_comm"]["mean"]), f"{what}: compute not calibrated")
        need(r["compute"]["min"] >= r["compute_target"]["min"] * (1 - 1e-6), f"{what}: compute below target")
        osu = max(0.0, 100 - (r["overall"]["mean"] - (r["compute"]["mean"] - t["mean"])) / r["pure_comm"]["mean"] * 100)
        need(finite(r["overlap"]) and 0 <= r["overlap"] <= 100 and abs(r["overlap"] - osu) < 1e-4,
             f"{what}: overlap {r['overlap']} != OSU's {osu}")
    need(fits == {}, f"nbc fits {fits}")

if problems:
    print("\n".join(problems))
    sys.exit(1)
print(f"ok: {mode}, {len(results)} results")
