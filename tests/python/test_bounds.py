"""Issue 32: inputs of the checkmpi command that a row of docs/reliability.md cannot hold (control characters, a
byte-order mark, deep nesting, NaN in results, a record that does not match its JSON). Each is refused with one
line naming the value and the limit, exit 2, nothing run or written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import DATA, assert_clean_error, checkmpi

from checkmpi import bounds
from checkmpi.campaign.execute import mismatch
from checkmpi.campaign.plan import plan
from checkmpi.campaign.spec import parse_spec
from checkmpi.errors import CheckmpiError
from checkmpi.results import load

OK_NAMELIST = b"&parameters lx=8 ly=8 lz=8 itfin=2 icheck=1 /\n"


@pytest.mark.parametrize("content,message", [
    (b"&parameters lx=8\x00junk ly=8 lz=8 /\n", "file.input, line 1: control character U+0000; a namelist file holds "
                                               "text only"),
    (b"&parameters\nlx=8 ly=8\nlz=8\x1b /\n", "file.input, line 3: control character U+001B"),
])
@pytest.mark.parametrize("given", [False, True])
def test_namelist_with_control_characters_is_refused(tmp_path, content, message, given):
    """file.input found in the working directory, or given as --input: checked before anything runs."""
    (tmp_path / "file.input").write_bytes(content)
    r = checkmpi("run", "--np", "1", "--json", "r.json", *(["--input", "file.input"] if given else []), cwd=tmp_path,
                 timeout=60)
    assert_clean_error(r, 2, message)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.input"]  # nothing written


def test_a_tab_and_crlf_are_text(tmp_path):
    from checkmpi.jobs import check_namelist

    path = tmp_path / "file.input"
    path.write_bytes(b"&parameters\tlx=8\r\nly=8 lz=8 /\r\n")
    check_namelist(path)  # no error
    path.write_bytes(b"\xef\xbb\xbf" + OK_NAMELIST)  # a UTF-8 byte-order mark: checkmpi-halo skips it
    check_namelist(path)


def _nested(folder: Path, depth: int) -> Path:
    path = folder / "deep.json"
    path.write_text("[" * depth + "]" * depth)
    return path


@pytest.mark.parametrize("argv", [
    ["report", "--no-report", "{f}"],
    ["export", "--format", "csv", "{f}"],
    ["predict", "--p2p", "{f}", "--procs", "2x1x1", "--local", "8x8x8"],
    ["predict", "--machine", "{f}", "--procs", "2x1x1", "--local", "8x8x8"],
])
def test_deeply_nested_json_is_refused_before_parsing(tmp_path, argv):
    """100,000 nested '[' once ended in 'internal error' (RecursionError)."""
    path = _nested(tmp_path, 100_000)
    r = checkmpi(*[a.replace("{f}", str(path)) for a in argv], timeout=60)
    assert_clean_error(r, 2, f"'{path}' nests [ and {{ more than 64 deep (the limit)")


def test_campaign_report_nested_too_deep(tmp_path):
    path = _nested(tmp_path, 100_000)
    r = checkmpi("report", "--no-report", str(DATA / "halo_4ranks.json"), "--campaign", str(path), timeout=60)
    assert_clean_error(r, 2, f"'{path}' nests [ and {{ more than 64 deep (the limit)")


def test_nesting_within_the_limit_and_brackets_in_strings_pass():
    bounds.check_depth("[" * 64 + "]" * 64, "x", 64)
    bounds.check_depth('{"a": "' + "[" * 1000 + '\\" ["}', "x", 64)
    bounds.check_depth('a = "[[[[\\"[[[" # [[[[[[\nb = \'[[[[[\'\n', "x", 2)
    with pytest.raises(CheckmpiError, match=r"x nests \[ and \{ more than 64 deep \(the limit\)"):
        bounds.check_depth("[" * 65, "x", 64)


def _halo(tmp_path: Path, change) -> Path:
    doc = json.loads((DATA / "halo_4ranks.json").read_text())
    change(doc)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))  # NaN and Infinity as Python writes them
    return path


def _set(keys: list, value):
    def change(doc):
        d = doc
        for k in keys[:-1]:
            d = d[k]
        d[keys[-1]] = value
    return change


@pytest.mark.parametrize("keys,value,message", [
    (["results", 1, "timers", "loop", "max"], float("nan"), "results[1].timers.loop.max is NaN, not a finite number"),
    (["results", 0, "timers", "comm", "mean"], float("inf"), "results[0].timers.comm.mean is Infinity, not a finite "
                                                             "number"),
    (["results", 0, "step_time", "median"], float("-inf"), "results[0].step_time.median is -Infinity, not a finite "
                                                          "number"),
    (["results", 2, "timers", "pack", "min"], -1e-6, "results[2].timers.pack.min is negative: -1e-06"),
])
@pytest.mark.parametrize("command", [["report", "--no-report"], ["export", "--format", "extrap"]])
def test_results_with_nan_infinity_or_negative_timers_are_refused(tmp_path, keys, value, message, command):
    """They were read, and written into the Extra-P export."""
    path = _halo(tmp_path, _set(keys, value))
    r = checkmpi(*command, str(path), timeout=60)
    assert_clean_error(r, 2, f"malformed results in '{path}': {message}")
    assert r.stdout == ""


def test_predict_on_a_nan_profile_names_the_key(tmp_path):
    doc = json.loads((DATA / "p2p_pingpong.json").read_text())
    doc["results"][0]["latency"]["mean"] = float("nan")
    path = tmp_path / "pp.json"
    path.write_text(json.dumps(doc))
    r = checkmpi("predict", "--p2p", str(path), "--procs", "2x1x1", "--local", "8x8x8", timeout=60)
    assert_clean_error(r, 2, f"malformed results in '{path}': results[0].latency.mean is NaN, not a finite number")


def test_machine_profile_with_infinity_names_the_key(tmp_path):
    text = (DATA / "profiles" / "machine_2ranks.json").read_text()
    path = tmp_path / "m.json"
    path.write_text(text.replace('"alpha": ', '"alpha": Infinity, "x": ', 1))
    r = checkmpi("predict", "--machine", str(path), "--procs", "2x1x1", "--local", "8x8x8", timeout=60)
    assert_clean_error(r, 2, f"malformed machine profile '{path}': links.intra.hockney[0].alpha is Infinity, not a "
                       "finite number")


@pytest.mark.parametrize("value,message", [
    ("inf", "got 'inf'"), ("-inf", "got '-inf'"), ("nan", "got 'nan'"), ("1e300", "got '1e300'"), ("0", "got '0'"),
    ("-5", "got '-5'"), ("0x10", "got '0x10'"), ("1_0", "got '1_0'"), ("10000001", "got '10000001'"),
])
def test_time_values(value, message):
    with pytest.raises(CheckmpiError) as e:
        bounds.option("--timeout", bounds.MAX_SECONDS, "seconds")(value)
    assert e.value.message == f"--timeout must be a number of seconds above 0 and at most 10^7, {message}"


@pytest.mark.parametrize("value", ["1", "0.5", ".5", "1e3", "10000000", "+2"])
def test_time_values_allowed(value):
    assert bounds.option("--timeout", bounds.MAX_SECONDS)(value) == float(value)


def test_timeout_in_range_still_stops_the_job(tmp_path, halo_bin):
    """The bound changes nothing for a sane limit: a run over it is stopped with the limit named."""
    r = checkmpi("run", "--bin", str(halo_bin), "--np", "1", "--local", "64x64x64", "--iters", "100000000",
                 "--force", "--strategy", "step2", "--no-report", "--json", str(tmp_path / "r.json"),
                 "--timeout", "2.5", timeout=120)
    assert_clean_error(r, 1, "timed out after 2.5 s")


def _one_strategy(tmp_path: Path, change=None) -> Path:
    """halo_4ranks.json (4 ranks, 2x2x1, global 32x32x16, 40 steps) with step0 only, as a campaign run writes it."""
    def keep_step0(doc):
        doc["results"] = doc["results"][:1]
        doc["fastest_group"] = ["step0"]
        if change:
            change(doc)
    return _halo(tmp_path, keep_step0)


SPEC = ('[campaign]\nname = "x"\n[halo]\nstrategies = ["step0"]\nitfin = 40\n[[sweep]]\nprocs = "2x2x1"\n'
        'size = "32x32x16"\n')


@pytest.mark.parametrize("change,message", [
    (None, None),
    (_set(["config", "lx"], 64), "the results (bad.json) hold size 64x32x16, the run 32x32x16"),
    (_set(["config", "itfin"], 41), "the results (bad.json) hold steps 41, the run 40"),
    (_set(["config", "proc_x"], 4), "the results (bad.json) hold grid 4x2x1, the run 2x2x1"),
    (_set(["context", "nprocs"], 8), "the results (bad.json) hold ranks 8, the run 4"),
])
def test_record_checked_against_its_json(tmp_path, change, message):
    """A record's results must be its run's: strategy, ranks, grid, size and steps; else the run is invalid
    (campaign run when it records it, campaign report when it reads it)."""
    spec = parse_spec(SPEC, tmp_path / "s.toml", resolved=["step0"])
    (run,) = plan(spec)
    assert mismatch(spec, run, load(_one_strategy(tmp_path, change))) == message
    other = parse_spec(SPEC.replace('"step0"', '"step2"'), tmp_path / "s.toml", resolved=["step2"])
    assert mismatch(other, plan(other)[0], load(_one_strategy(tmp_path))) == \
        "the results (bad.json) hold strategies step0, the run step2"


def test_campaign_report_marks_a_record_whose_json_differs_invalid(tmp_path):
    """An ok record pointing to results of another run (edited, or copied over) is reported invalid, its note
    saying what differs."""
    from checkmpi.campaign.execute import new_record
    from checkmpi.campaign.records import CampaignDir
    from checkmpi.campaign.report import gather

    spec = parse_spec(SPEC, tmp_path / "s.toml", resolved=["step0"])
    (run,) = plan(spec)
    cdir = CampaignDir(tmp_path / "c")
    cdir.create_or_check(spec)
    out = cdir.output_dir(run.id, 1)
    out.mkdir(parents=True)
    shutil.copy(_one_strategy(tmp_path, _set(["config", "itfin"], 4)), out / "halo.json")
    record = new_record(cdir, spec, run, None, ["vm"], None)
    record.update(status="ok", results=cdir.rel(out / "halo.json"), elapsed_s=1.0)
    cdir.write_record(record)
    cell = gather(cdir, spec, [run])[run.id]
    assert cell.status == "invalid" and cell.record["note"] == "the results (halo.json) hold steps 4, the run 40"


def test_campaign_option_given_twice_writes_nothing(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text('[campaign]\nname = "x"\n[[sweep]]\nlocal = "8x8x8"\nnp = [1]\n')
    r = checkmpi("campaign", "run", str(spec), "--dir", str(tmp_path / "a"), "--dir", str(tmp_path / "b"), timeout=60)
    assert_clean_error(r, 2, "option --dir is given twice; give it once (see 'checkmpi campaign run --help')")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.toml"]


def test_a_strategy_the_results_skipped_is_no_measurement(tmp_path):
    def skip_step0(doc):
        row = doc["results"][0]
        doc["results"] = []
        doc["skipped"] = [{"strategy": "step0", "catalog": row["catalog"], "reason": "not on this backend"}]
        doc["fastest_group"] = []
    spec = parse_spec(SPEC, tmp_path / "s.toml", resolved=["step0"])
    results = load(_halo(tmp_path, skip_step0))
    assert mismatch(spec, plan(spec)[0], results) == "the results (bad.json) hold strategies none, the run step0"
