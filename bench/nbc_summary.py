#!/usr/bin/env python3
"""nbc_summary.py OUT ROUNDS NAME...: the tables of bench/nbc.sh from the JSON
files OUT/NAME.{ops,pencil}.ROUND.json of checkmpi-p2p nbc."""
import json
import statistics
import sys

out, rounds, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]


def key(x):
    return x["op"], "x".join(map(str, x["grid"])) if "grid" in x else str(x["size"])


def table(title, cols, rows, cell, width):
    print(title)
    print(f"{'# size':<12}" + "".join(f"{c:>{width}}" for c in cols))
    for k in rows:
        print(f"{k:<12}" + "".join(f"{cell(k, c):>{width}}" for c in cols))


for part in ("ops", "pencil"):
    docs = {n: [json.load(open(f"{out}/{n}.{part}.{r}.json")) for r in range(1, rounds + 1)] for n in names}
    if part == "ops":
        for n in names:
            c = docs[n][0]["context"]
            print(f"# {n}: {c['mpi_library'].split(',')[0]}; cpus {[p['cpu'] for p in c['placement']]}; "
                  f"progress: {c['progress_thread']['note']}")
    first = docs[names[0]][0]["results"]
    tests = sorted({x["tests"] for x in first})
    thread = ", ".join(n for n in names if docs[n][0]["context"]["progress_thread"]["active"]) or "none"
    for op in dict.fromkeys(x["op"] for x in first):
        rows = list(dict.fromkeys(key(x)[1] for x in first if x["op"] == op))

        def values(n, k, t, f):
            """f of every round's entry (op, k, t) of configuration n."""
            return [f(x) for d in docs[n] for x in d["results"] if key(x) == (op, k) and x["tests"] == t]

        def overlap(k, c):
            v = values(c[0], k, c[1], lambda x: x["overlap"] if x["overlap"] is not None else float("nan"))
            return f"{statistics.median(v):6.1f} [{min(v):4.0f}..{max(v):4.0f}]"

        def wait(k, c):
            """MPI_Wait / pure comm and MPI_Test / pure comm: where the communication went."""
            w = values(c[0], k, c[1], lambda x: x["wait"]["median"] / x["pure_comm"]["median"])
            t = values(c[0], k, c[1], lambda x: x["test"]["median"] / x["pure_comm"]["median"])
            return f"{statistics.median(w):.2f} / {statistics.median(t):.2f}"

        def times(k, n):
            pure = statistics.median(values(n, k, tests[0], lambda x: x["pure_comm"]["median"]))
            blocking = statistics.median(values(n, k, tests[0], lambda x: x["blocking"]["median"]))
            return f"{pure * 1e6:11.2f} |{blocking * 1e6:10.2f}"

        cols = [(n, t) for n in names for t in tests]
        labels = {f"{n}/{t}": (n, t) for n, t in cols}
        print()
        table(f"# {op}: OSU overlap (%), median of {rounds} rounds [min..max]; columns: config/MPI_Test calls; "
              f"progress thread on: {thread}", list(labels), rows, lambda k, c: overlap(k, labels[c]), 20)
        table(f"# {op}: MPI_Wait after the compute / pure comm, and MPI_Test calls / pure comm (medians; "
              "median of the rounds); wait about 1: nothing moved during the compute", list(labels), rows,
              lambda k, c: wait(k, labels[c]), 17)
        table(f"# {op}: medians over iterations, ranks and rounds (us): pure comm (post + wait) | blocking", names,
              rows, times, 24)
