#!/usr/bin/env python3
"""p2p_osu_compare.py DIR NAME ROUNDS: bench/p2p_osu.sh's table for one
comparison: OSU's printed figures (DIR/NAME.osu.R) beside checkmpi-p2p's
same figures (DIR/NAME.p2p.R.json), per size the median over rounds of
each, and p2p/osu."""
import json
import statistics
import sys

out, name, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
kind = name.split("-")[0]

# (label, OSU's column after the size, checkmpi-p2p's figure of a result) per kind; OSU prints means.
US, MB = 1e6, 1e-6
FIGURES = {
    "pingpong": [("latency (us)", 1, lambda r: r["latency"]["mean"] * US)],
    "threads": [("latency (us)", 1, lambda r: r["latency"]["mean"] * US)],
    "bw": [("MB/s", 1, lambda r: r["bandwidth"] * MB)],
    "bibw": [("MB/s", 1, lambda r: r["bandwidth"] * MB)],
    "mbw": [("MB/s", 1, lambda r: r["bandwidth"] * MB), ("messages/s", 2, lambda r: r["message_rate"])],
    "coll": [("avg latency (us)", 1, lambda r: r["avg_latency"] * US)],
    "barrier": [("avg latency (us)", 0, lambda r: r["avg_latency"] * US)],
    "rma": [("latency (us)", 1, lambda r: r["latency"]["mean"] * US)],
    "nbc": [("pure comm (us)", 3, lambda r: r["pure_comm"]["mean"] * US),
            ("overall (us)", 1, lambda r: r["overall"]["mean"] * US)],
}[kind]


def osu_rows(path):
    """{size: [columns after the size]} of OSU's output; osu_barrier's one line has no size (0)."""
    rows = {}
    for line in open(path):
        words = line.split()
        if not words or line.lstrip().startswith("#"):
            continue
        try:
            numbers = [float(w) for w in words]
        except ValueError:
            continue
        if kind == "barrier":
            rows[0] = numbers
        elif numbers[0].is_integer():
            rows[int(numbers[0])] = numbers[1:]
    return rows


def p2p_rows(path):
    doc = json.load(open(path))
    return {r["size"]: r for r in doc["results"] if r.get("tests", 0) == 0}


osu = [osu_rows(f"{out}/{name}.osu.{r}") for r in range(1, rounds + 1)]
p2p = [p2p_rows(f"{out}/{name}.p2p.{r}.json") for r in range(1, rounds + 1)]
sizes = sorted(set.intersection(*(set(o) for o in osu), *(set(p) for p in p2p)))
if not sizes:
    print(f"# {name}: no size both measured")
    sys.exit(0)
for label, column, figure in FIGURES:
    print(f"# {name}: {label}, median of {rounds} rounds; p2p/osu")
    print(f"{'# Size':<10}{'osu':>14}{'p2p':>14}{'p2p/osu':>10}")
    ratios = []
    for s in sizes:
        o = statistics.median(row[s][column - 1 if kind != "barrier" else 0] for row in osu)
        p = statistics.median(figure(row[s]) for row in p2p)
        ratios.append(p / o if o else float("nan"))
        print(f"{s:<10}{o:14.3f}{p:14.3f}{ratios[-1]:10.3f}")
    print(f"# {name} {label}: median p2p/osu {statistics.median(ratios):.3f} "
          f"(range {min(ratios):.3f} .. {max(ratios):.3f}) over {len(sizes)} sizes")
