#!/usr/bin/env python3
"""p2p_osu_compare.py DIR NAME ROUNDS [CONTROL [EXTRA]]: bench/p2p_osu.sh's
table for one comparison: OSU's printed figures (DIR/NAME.osu.R) beside
checkmpi-p2p's same figures (DIR/NAME.p2p.R.json), per size the median over
rounds of each, and p2p/osu; with CONTROL 1 also OSU's second run
(DIR/NAME.osu2.R) as osu2/osu, the noise floor; with EXTRA a third column
against a variant of OSU's program (DIR/NAME.EXTRA.R): "bare", the same OSU
program built without its per-iteration clock reads, as p2p/bare; "own",
osu_latency_mt with each sender thread's own clock and sum, as p2p/own;
"held",
osu_ialltoall with the heap held as checkmpi-p2p nbc holds it
(bench/osu_heap_hold.cpp), as p2p/held. Below each table, a launch being a
draw (placement, the library's state): each round's median ratio over
sizes (the programs of a round run back to back), the median over rounds
and a 95% distribution-free interval of it (from 6 rounds), so that a
difference is told from luck;
and "best": per size each program's best round (lowest time, highest rate)
against the other's, the median over sizes: where launches land in a fast
or a slow state at random, what each reaches in its fast one."""
import json
import math
import statistics
import sys

out, name, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
control = len(sys.argv) > 4 and sys.argv[4] == "1"
extra = sys.argv[5] if len(sys.argv) > 5 and sys.argv[5] in ("bare", "own", "held") else ""
EXTRA_NOTE = {"bare": "OSU without its clock reads", "own": "OSU with each thread's own clock and sum",
              "held": "OSU with the heap held as checkmpi-p2p holds it"}
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


def value(row, s, column, figure=None):
    """Size s's figure in one round: checkmpi-p2p's through `figure` (its JSON result), OSU's printed column."""
    return figure(row[s]) if figure else row[s][column - 1]


def median_ci(values, level=0.95):
    """The median and a distribution-free interval of it: order statistics k and n-k+1 (1-based) with k the
    largest whose binomial coverage is at least `level`; None under 6 values (no such k)."""
    xs, n = sorted(values), len(values)
    covered = None
    for k in range(1, n // 2 + 1):
        miss = 2 * sum(math.comb(n, i) for i in range(k)) / 2 ** n  # P(median outside [x_k, x_{n-k+1}])
        if 1 - miss >= level:
            covered = (xs[k - 1], xs[n - k])
    return statistics.median(xs), covered


def per_round(num, den, column, figure=None):
    """Each round's median over sizes of num/den, the two figures from that round (run back to back)."""
    return [statistics.median(ratio(value(n_row, s, column, figure), value(d_row, s, column)) for s in sizes)
            for n_row, d_row in zip(num, den)]


def best(num, den, column, figure=None):
    """The median over sizes of num's best round over den's (the lowest time, the highest rate)."""
    pick = max if kind in ("bw", "bibw", "mbw") else min
    return statistics.median(ratio(pick(value(row, s, column, figure) for row in num),
                                   pick(value(row, s, column) for row in den)) for s in sizes)


def summary(label, medians):
    """'label per round M [LO, HI]': the median over rounds and its 95% interval (none under 6 rounds)."""
    m, ci = median_ci(medians)
    return f"{label} per round {m:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


runs = range(1, rounds + 1)
osu = [osu_rows(f"{out}/{name}.osu.{r}") for r in runs]
osu2 = [osu_rows(f"{out}/{name}.osu2.{r}") for r in runs] if control else []
extras = [osu_rows(f"{out}/{name}.{extra}.{r}") for r in runs] if extra else []
p2p = [p2p_rows(f"{out}/{name}.p2p.{r}.json") for r in runs]
sizes = sorted(set.intersection(*(set(o) for o in osu + osu2 + extras), *(set(p) for p in p2p)))
if not sizes:
    print(f"# {name}: no size both measured")
    sys.exit(0)
for label, column, figure in FIGURES:
    print(f"# {name}: {label}, median of {rounds} rounds; p2p/osu" + ("; control osu2/osu" if control else "")
          + (f"; p2p/{extra}: {EXTRA_NOTE[extra]}" if extra else ""))
    print(f"{'# Size':<10}{'osu':>14}{'p2p':>14}{'p2p/osu':>10}" + (f"{'osu2/osu':>10}" if control else "")
          + (f"{'p2p/' + extra:>10}" if extra else ""))
    ratios, controls, extra_ratios = [], [], []
    for s in sizes:
        o = statistics.median(value(row, s, column) for row in osu)
        p = statistics.median(value(row, s, column, figure) for row in p2p)
        ratios.append(ratio(p, o))
        line = f"{s:<10}{o:14.4f}{p:14.4f}{ratios[-1]:10.3f}"
        if control:
            controls.append(ratio(statistics.median(value(row, s, column) for row in osu2), o))
            line += f"{controls[-1]:10.3f}"
        if extra:
            extra_ratios.append(ratio(p, statistics.median(value(row, s, column) for row in extras)))
            line += f"{extra_ratios[-1]:10.3f}"
        print(line)
    tail = f"; control osu2/osu {statistics.median(controls):.3f}" if control else ""
    if extra:
        tail += f"; p2p/{extra} {statistics.median(extra_ratios):.3f}"
    print(f"# {name} {label}: median p2p/osu {statistics.median(ratios):.3f} "
          f"(range {min(ratios):.3f} .. {max(ratios):.3f}) over {len(sizes)} sizes{tail}")
    line = summary("p2p/osu", per_round(p2p, osu, column, figure)) + f", best {best(p2p, osu, column, figure):.3f}"
    if control:
        line += "; " + summary("osu2/osu", per_round(osu2, osu, column)) + f", best {best(osu2, osu, column):.3f}"
    if extra:
        line += "; " + summary(f"p2p/{extra}", per_round(p2p, extras, column, figure)) + \
            f", best {best(p2p, extras, column, figure):.3f}"
    print(f"# {name} {label}: {line}")
