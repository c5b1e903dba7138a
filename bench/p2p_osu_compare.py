#!/usr/bin/env python3
"""p2p_osu_compare.py DIR NAME ROUNDS [CONTROL]: bench/p2p_osu.sh's table for
one comparison: OSU's printed figures (DIR/NAME.osu.R) beside checkmpi-p2p's
same figures (DIR/NAME.p2p.R.json), per size the median over rounds of each,
and p2p/osu; with CONTROL 1 also OSU's second run (DIR/NAME.osu2.R) as
osu2/osu, the noise floor."""
import json
import statistics
import sys

out, name, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
control = len(sys.argv) > 4 and sys.argv[4] == "1"
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
    "barrier": [("avg latency (us)", 1, lambda r: r["avg_latency"] * US)],
    "rma": [("latency (us)", 1, lambda r: r["latency"]["mean"] * US)],
    "nbc": [("pure comm (us)", 3, lambda r: r["pure_comm"]["mean"] * US),
            ("overall (us)", 1, lambda r: r["overall"]["mean"] * US)],
}[kind]


def osu_rows(path):
    """{size: [figures after the size]} of OSU's output; osu_barrier's one line has no size: {0: [figure]}."""
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
        elif numbers[0].is_integer() and len(numbers) > 1:
            rows[int(numbers[0])] = numbers[1:]
    return rows


def p2p_rows(path):
    doc = json.load(open(path))
    return {r["size"]: r for r in doc["results"] if r.get("tests", 0) == 0}


def ratio(a, b):
    return a / b if b else float("nan")


runs = range(1, rounds + 1)
osu = [osu_rows(f"{out}/{name}.osu.{r}") for r in runs]
osu2 = [osu_rows(f"{out}/{name}.osu2.{r}") for r in runs] if control else []
p2p = [p2p_rows(f"{out}/{name}.p2p.{r}.json") for r in runs]
sizes = sorted(set.intersection(*(set(o) for o in osu + osu2), *(set(p) for p in p2p)))
if not sizes:
    print(f"# {name}: no size both measured")
    sys.exit(0)
for label, column, figure in FIGURES:
    print(f"# {name}: {label}, median of {rounds} rounds; p2p/osu" + ("; control osu2/osu" if control else ""))
    print(f"{'# Size':<10}{'osu':>14}{'p2p':>14}{'p2p/osu':>10}" + (f"{'osu2/osu':>10}" if control else ""))
    ratios, controls = [], []
    for s in sizes:
        o = statistics.median(row[s][column - 1] for row in osu)
        p = statistics.median(figure(row[s]) for row in p2p)
        ratios.append(ratio(p, o))
        line = f"{s:<10}{o:14.4f}{p:14.4f}{ratios[-1]:10.3f}"
        if control:
            controls.append(ratio(statistics.median(row[s][column - 1] for row in osu2), o))
            line += f"{controls[-1]:10.3f}"
        print(line)
    tail = f"; control osu2/osu {statistics.median(controls):.3f}" if control else ""
    print(f"# {name} {label}: median p2p/osu {statistics.median(ratios):.3f} "
          f"(range {min(ratios):.3f} .. {max(ratios):.3f}) over {len(sizes)} sizes{tail}")
