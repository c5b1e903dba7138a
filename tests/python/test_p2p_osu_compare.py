"""bench/p2p_osu_compare.py reads OSU's real printed output (headers, the
"# Datatype" line, osu_barrier's one figure without a size, osu_mbw_mr's two
columns, the nbc's five) and pairs each figure with checkmpi-p2p's same
figure: the fixtures are recorded outputs of both (data/osu_outputs)."""

from __future__ import annotations

import json
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DATA, REPO

SCRIPT = REPO / "bench" / "p2p_osu_compare.py"
FIXTURES = DATA / "osu_outputs"


def compare(tmp_path: Path, name: str, rounds: int, control: bool = False,
            scale: float = 1.0) -> list[str]:
    """Round 1 is the fixture; further rounds and the control (osu2) are OSU's
    figures times `scale` (every round k scaled by scale**(k-1))."""
    osu = (FIXTURES / f"{name}.osu.1").read_text()
    for r in range(1, rounds + 1):
        factor = scale ** (r - 1)
        (tmp_path / f"{name}.osu.{r}").write_text(rescale(osu, factor))
        shutil.copy(FIXTURES / f"{name}.p2p.1.json", tmp_path / f"{name}.p2p.{r}.json")
        if control:
            (tmp_path / f"{name}.osu2.{r}").write_text(rescale(osu, 2.0 * factor))
    args = [sys.executable, str(SCRIPT), str(tmp_path), name, str(rounds)] + (["1"] if control else [])
    proc = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def rescale(text: str, factor: float) -> str:
    """OSU's data lines with every figure after the size times factor."""
    lines = []
    for line in text.splitlines():
        words = line.split()
        if words and not line.lstrip().startswith("#"):
            figures = [float(w) for w in words]
            if len(figures) == 1:  # osu_barrier: no size
                figures = [figures[0] * factor]
            else:
                figures = [figures[0]] + [f * factor for f in figures[1:]]
            line = " ".join(f"{f:.6f}" for f in figures)
        lines.append(line)
    return "\n".join(lines) + "\n"


def osu_figures(name: str) -> dict[int, list[float]]:
    rows = {}
    for line in (FIXTURES / f"{name}.osu.1").read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            numbers = [float(w) for w in line.split()]
            rows[int(numbers[0]) if len(numbers) > 1 else 0] = numbers[1:] or numbers
    return rows


def table(lines: list[str], label: str) -> dict[int, list[float]]:
    """{size: [osu, p2p, p2p/osu(, osu2/osu)]} of the table headed by label."""
    start = next(i for i, line in enumerate(lines) if label in line and "median of" in line)
    rows = {}
    for line in lines[start + 2:]:
        if line.startswith("#"):
            break
        words = line.split()
        rows[int(words[0])] = [float(w) for w in words[1:]]
    return rows


def results(name: str) -> dict[int, dict]:
    doc = json.loads((FIXTURES / f"{name}.p2p.1.json").read_text())
    return {r["size"]: r for r in doc["results"]}


@pytest.mark.parametrize("name,label,column,figure", [
    ("pingpong", "latency (us)", 0, lambda r: r["latency"]["mean"] * 1e6),
    ("rma-put-fence", "latency (us)", 0, lambda r: r["latency"]["mean"] * 1e6),
    ("coll-allreduce", "avg latency (us)", 0, lambda r: r["avg_latency"] * 1e6),
    ("barrier", "avg latency (us)", 0, lambda r: r["avg_latency"] * 1e6),
    ("mbw-mr", "MB/s", 0, lambda r: r["bandwidth"] * 1e-6),
    ("mbw-mr", "messages/s", 1, lambda r: r["message_rate"]),
    ("nbc", "pure comm (us)", 2, lambda r: r["pure_comm"]["mean"] * 1e6),
    ("nbc", "overall (us)", 0, lambda r: r["overall"]["mean"] * 1e6),
])
def test_each_figure_pairs_osu_column_with_p2p_figure(tmp_path, name, label, column, figure):
    rows = table(compare(tmp_path, name, 1), label)
    osu, p2p = osu_figures(name), results(name)
    assert sorted(rows) == sorted(osu)  # every size OSU printed, "# Datatype" and headers skipped
    for size, (o, p, ratio) in rows.items():
        assert o == pytest.approx(osu[size][column], abs=1e-4)
        assert p == pytest.approx(figure(p2p[size]), abs=1e-4)
        assert ratio == pytest.approx(p / o, abs=1e-3)


def test_median_over_rounds_and_control(tmp_path):
    # OSU's rounds at 1x, 1.1x, 1.21x: the median is round 2's; osu2 is twice each round.
    lines = compare(tmp_path, "pingpong", 3, control=True, scale=1.1)
    rows = table(lines, "latency (us)")
    osu, p2p = osu_figures("pingpong"), results("pingpong")
    for size, (o, p, ratio, control) in rows.items():
        assert o == pytest.approx(osu[size][0] * 1.1, abs=1e-4)
        assert ratio == pytest.approx(p2p[size]["latency"]["mean"] * 1e6 / o, abs=1e-3)
        assert control == pytest.approx(2.0, abs=1e-3)
    summary = next(line for line in lines if "median p2p/osu" in line)
    ratios = [r[2] for r in rows.values()]
    assert f"median p2p/osu {statistics.median(ratios):.3f}" in summary
    assert "control osu2/osu 2.000" in summary and f"over {len(rows)} sizes" in summary


def test_no_common_size_says_so(tmp_path):
    (tmp_path / "pingpong.osu.1").write_text("# OSU MPI Latency Test v7.2\n# Size Latency (us)\n")
    shutil.copy(FIXTURES / "pingpong.p2p.1.json", tmp_path / "pingpong.p2p.1.json")
    proc = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path), "pingpong", "1"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "# pingpong: no size both measured"


@pytest.mark.parametrize("name,label,extra,note", [
    ("rma-put-fence", "latency (us)", "bare", "OSU without its clock reads"),
    ("nbc", "pure comm (us)", "held", "OSU with the heap held as checkmpi-p2p holds it"),
])
def test_extra_column_against_a_variant_of_osu(tmp_path, name, label, extra, note):
    # The variant's program (NAME.EXTRA.R: OSU_BARE's build, or osu_ialltoall with the heap held) at half OSU's
    # figures: p2p/EXTRA is twice p2p/osu, size by size.
    osu = (FIXTURES / f"{name}.osu.1").read_text()
    for r in (1, 2):
        (tmp_path / f"{name}.osu.{r}").write_text(osu)
        (tmp_path / f"{name}.{extra}.{r}").write_text(rescale(osu, 0.5))
        shutil.copy(FIXTURES / f"{name}.p2p.1.json", tmp_path / f"{name}.p2p.{r}.json")
    proc = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path), name, "2", "0", extra],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert any(f"p2p/{extra}: {note}" in line for line in lines)
    rows = table(lines, label)
    assert sorted(rows) == sorted(osu_figures(name))
    for size, (o, p, ratio, to_extra) in rows.items():
        assert to_extra == pytest.approx(p / (o * 0.5), rel=1e-3)
    summary = next(line for line in lines if "median p2p/osu" in line and label in line)
    assert f"p2p/{extra} {statistics.median(r[3] for r in rows.values()):.3f}" in summary
    assert re.search(rf"p2p/{extra} per round [\d.]+, best [\d.]+", next(
        line for line in lines if "per round" in line and label in line))


def test_per_round_median_and_interval(tmp_path):
    # Six rounds, OSU's round r at 1.1**(r-1): each round's median ratio over sizes falls by 1.1 a round; with six
    # the 95% interval of their median is [lowest, highest]; "best" pairs each program's lowest time; osu2 is twice
    # OSU in every round.
    lines = compare(tmp_path, "pingpong", 6, control=True, scale=1.1)
    osu, p2p = osu_figures("pingpong"), results("pingpong")
    base = statistics.median(p2p[s]["latency"]["mean"] * 1e6 / osu[s][0] for s in osu)
    rounds = [base / 1.1 ** r for r in range(6)]
    line = next(line for line in lines if "per round" in line)
    m = re.search(r"p2p/osu per round ([\d.]+) \[([\d.]+), ([\d.]+)\], best ([\d.]+); "
                  r"osu2/osu per round ([\d.]+) \[[\d., ]+\], best ([\d.]+)", line)
    assert m, line
    assert float(m[1]) == pytest.approx(statistics.median(rounds), abs=2e-3)
    assert float(m[2]) == pytest.approx(min(rounds), abs=2e-3)
    assert float(m[3]) == pytest.approx(max(rounds), abs=2e-3)
    assert float(m[4]) == pytest.approx(base, abs=2e-3)  # each program's lowest time: OSU's first round
    assert float(m[5]) == pytest.approx(2.0, abs=2e-3) and float(m[6]) == pytest.approx(2.0, abs=2e-3)
    # Under six rounds no interval is printed.
    (tmp_path / "5").mkdir()
    short = next(line for line in compare(tmp_path / "5", "pingpong", 5) if "per round" in line)
    assert "[" not in short
