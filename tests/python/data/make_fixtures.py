"""Writes the fixtures beside this file (run it to regenerate them).

Without arguments: the synthetic p2p fixtures. checkmpi-p2p was written
separately; these files follow its schema with synthetic but
self-consistent numbers: the measurements are made from the very parameters
the fits report, so tests can check the model against known values.

With `nbc`: p2p_nbc*.json, recorded from real runs of the built tool
(build/bin/checkmpi-p2p, Open MPI; the commands are in NBC_RUNS).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
REPO = HERE.parents[2]

# checkmpi-p2p nbc runs, validated (-c), small enough for a fixture.
NBC_RUNS = {
    "p2p_nbc": (2, ["--op", "ialltoall,ibcast", "-m", "64:1024", "-i", "50", "-x", "5", "--progress", "0,4", "-c"]),
    "p2p_nbc_pencil": (4, ["--pencil", "2x2", "--grid", "9x7x5,16x16x16", "-i", "20", "-x", "2", "--progress", "0,4",
                           "-c"]),
}


def record_nbc() -> None:
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    for name, (np, args) in NBC_RUNS.items():
        cmd = ["mpiexec.openmpi", "--oversubscribe", "-n", str(np), str(REPO / "build" / "bin" / "checkmpi-p2p"),
               "nbc", *args, "--json", str(HERE / f"{name}.json")]
        print(" ".join(cmd))
        subprocess.run(cmd, env=env, check=True, timeout=300, stdout=subprocess.DEVNULL)

# Two Hockney regimes: eager up to 8 KiB, rendezvous above.
EAGER = {"alpha": 0.4e-6, "beta": 5e9}
RENDEZVOUS = {"alpha": 2.0e-6, "beta": 10e9}
BREAK = 8192


def context(nprocs: int, same_node: bool | None) -> dict:
    return {"tool": "checkmpi-p2p", "version": "0.1.0", "git_revision": "fixture", "date": "2026-11-22T12:00:00Z",
            "mpi_library": "Open MPI v4.1.4, package: Debian OpenMPI", "mpi_standard": "3.1", "nprocs": nprocs,
            "nodes": 1, "ranks_per_node": nprocs, "hostnames": ["node1"] * nprocs, "timer_resolution": 1e-09,
            "placement": [{"rank": r, "hostname": "node1", "cpu": r, "node": 0} for r in range(nprocs)],
            "same_node": same_node}


def stats(t: float) -> dict:
    return {"min": 0.95 * t, "median": t, "mean": 1.05 * t, "max": 1.6 * t}


def hockney_time(s: int) -> float:
    p = EAGER if s <= BREAK else RENDEZVOUS
    return p["alpha"] + s / p["beta"]


def config(mode: str, **extra) -> dict:
    base = {"mode": mode, "buffer": "host", "validate": False, "min_size": 1, "max_size": 4194304,
            "iterations": 10000, "warmup": 100, "iterations_large": 1000, "warmup_large": 10,
            "large_threshold": 8192, "window": 64, "n": 10}
    base.update(extra)
    return base


def hockney_fit(max_size: int) -> dict:
    return {"hockney": {"segments": [
        {"min_size": 1, "max_size": BREAK, **EAGER, "r2": 0.998},
        {"min_size": 2 * BREAK, "max_size": max_size, **RENDEZVOUS, "r2": 0.9995}], "breakpoints": [BREAK]}}


def pingpong() -> dict:
    sizes = [2 ** k for k in range(23)]
    results = []
    for s in sizes:
        t = hockney_time(s)
        results.append({"size": s, "iterations": 10000 if s <= 8192 else 1000, "latency": stats(t),
                        "bandwidth": s / t})
    return {"schema": "checkmpi.p2p/1", "context": context(2, True), "config": config("pingpong"),
            "mode": "pingpong", "results": results, "fits": hockney_fit(sizes[-1])}


def bw() -> dict:
    results = []
    for k in range(23):
        s = 2 ** k
        window_time = 64 * hockney_time(s) * 0.6  # overlapped sends beat ping-pong
        results.append({"size": s, "iterations": 100, "window": 64, "bandwidth": 64 * s / window_time,
                        "time": stats(window_time)})
    return {"schema": "checkmpi.p2p/1", "context": context(2, True), "config": config("bw"), "mode": "bw",
            "results": results, "fits": hockney_fit(2 ** 22)}


def ring() -> dict:
    results = [{"nprocs": 4, "size": 2 ** k, "iterations": 1000, "time": stats(2 * hockney_time(2 ** k))}
               for k in range(0, 17, 2)]
    return {"schema": "checkmpi.p2p/1", "context": context(4, None), "config": config("ring", max_size=65536),
            "mode": "ring", "results": results, "fits": {}}


LOGGP = {"L": 0.3e-6, "o_s": 0.2e-6, "o_r": 0.25e-6, "g": 0.5e-6, "G": 0.1e-9}


def loggp() -> dict:
    p = LOGGP
    n = 10
    results = []
    for k in range(17):
        s = 2 ** k
        prtt_1 = 2 * (p["L"] + p["o_s"] + p["o_r"] + p["G"] * s)
        gap = p["g"] + p["G"] * s
        results.append({"size": s, "prtt_1_0": prtt_1, "prtt_n_0": prtt_1 + (n - 1) * gap,
                        "prtt_n_d": prtt_1 + (n - 1) * (prtt_1 + p["o_s"]), "d": prtt_1, "o_s": p["o_s"],
                        "o_r": p["o_r"], "g_plus_Gs": gap})
    fit = {"loggp": {"n": n, **p, "r2": 0.9999,
                     "residuals": [{"size": r["size"], "residual": 0.0} for r in results],
                     "warnings": ["d < g + G*s at 65536 bytes: o_s may be underestimated"]}}
    return {"schema": "checkmpi.p2p/1", "context": context(2, True), "config": config("loggp", max_size=65536),
            "mode": "loggp", "results": results, "fits": fit}


DATATYPE = {"O": 0.5e-9, "o": 0.3e-6}


def datatype() -> dict:
    results = []
    for count, blocklen, stride in [(1, 64, 64), (2, 4, 4), (2, 2, 4), (64, 16, 32), (256, 16, 64),
                                    (1024, 64, 128), (4096, 1, 2)]:
        nbytes = count * blocklen * 4
        packed = hockney_time(nbytes) + 2 * nbytes / 10e9
        contiguous = count == 1 or blocklen == stride
        extra = 0.0 if contiguous else DATATYPE["o"] + DATATYPE["O"] * nbytes
        results.append({"count": count, "blocklen": blocklen, "stride": stride, "bytes": nbytes,
                        "contiguous": contiguous, "datatype": stats(packed + extra), "packed": stats(packed),
                        "overhead": extra})
    return {"schema": "checkmpi.p2p/1", "context": context(2, True), "config": config("datatype"),
            "mode": "datatype", "results": results, "fits": {"datatype": {**DATATYPE, "r2": 0.99}}}


def halo_all_steps() -> dict:
    """A checkmpi-halo result with step0..step10 and keys a newer tool may add,
    derived from the real 4-rank run halo_4ranks.json; step4 is skipped."""
    doc = json.loads((HERE / "halo_4ranks.json").read_text())
    doc["context"].update({"backend": "host", "omp_threads": 1})
    base = doc["results"][2]
    aliases = ["kernel-pack", "kernel-pack-aware", "isend-recv-x", "isend-recv", "isend-irecv", "overlap",
               "overlap-async", "overlap-masked"]
    for step, alias in enumerate(aliases, start=3):
        entry = {"strategy": f"step{step}", "alias": alias, "step": step, "available": True, "staged": False,
                 "self_copy": False, "valid": True, "error": None, "steps": base["steps"],
                 "timers": {k: {q: v * (1 + 0.05 * step) for q, v in t.items()} for k, t in base["timers"].items()},
                 "bytes_per_step": base["bytes_per_step"], "compute_bytes_per_step": base["compute_bytes_per_step"]}
        if step == 4:
            entry = {"strategy": "step4", "alias": alias, "step": 4, "available": False,
                     "skipped": "same work as step3 on the host backend"}
        doc["results"].append(entry)
    return doc


if __name__ == "__main__" and sys.argv[1:] == ["nbc"]:
    record_nbc()
elif __name__ == "__main__":
    for name, doc in (("p2p_pingpong", pingpong()), ("p2p_bw", bw()), ("p2p_ring", ring()),
                      ("p2p_loggp", loggp()), ("p2p_datatype", datatype()), ("halo_all_steps", halo_all_steps())):
        (HERE / f"{name}.json").write_text(json.dumps(doc, indent=1) + "\n")
