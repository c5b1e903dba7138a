"""Campaign specs and plans (no MPI): the issue's spec, every key's checks,
the run list, the Slurm batch script."""

from __future__ import annotations

from pathlib import Path

import pytest

from checkmpi import catalog
from campaign_helpers import flat
from conftest import REPO, assert_clean_error, checkmpi

from checkmpi.campaign.plan import nodes_for, plan, points
from checkmpi.campaign.records import CampaignDir
from checkmpi.campaign.slurm import batch_script, sbatch_options
from checkmpi.campaign.spec import load_spec, parse_spec
from checkmpi.errors import CheckmpiError

TINY = REPO / "examples" / "campaign-tiny.toml"

# The spec of issue 12, exactly as written there.
ISSUE_SPEC = '''[campaign]
name = "tiny"
executor = "local"          # "local": mpirun/mpiexec here; "slurm": sbatch + srun
repetitions = 2             # independent submissions (appendix A's 12 jobs)
[launch]
ranks_per_node = 2
time_limit_s = 300          # per submission
too_slow = 5.0              # a run slower than this × its expected time is killed and recorded as too slow
[halo]
strategies = ["step2", "step7"]
itfin = 40
icheck = 20
[[sweep]]                   # appendix A: one grid, growing global size
procs = "2x1x1"
size = ["32x32x32", "48x48x48"]
[[sweep]]                   # Table 4: weak scale-up, fixed size per rank, cubic-ish grids
local = "16x16x16"
np = [1, 2, 4]
'''


def test_the_example_is_the_issue_spec():
    assert TINY.read_text() == ISSUE_SPEC


def test_issue_spec_parses_and_plans_20_runs():
    spec = load_spec(TINY)
    assert (spec.name, spec.executor, spec.repetitions, spec.ranks_per_node) == ("tiny", "local", 2, 2)
    assert spec.time_limits == (300.0, 300.0) and spec.too_slow == 5.0 and spec.too_slow_min_s == 60.0
    assert spec.strategies == ("step2", "step7") and (spec.itfin, spec.icheck) == (40, 20)
    assert [(p.procs, p.size, p.local) for p in points(spec)] == [
        ((2, 1, 1), (32, 32, 32), (16, 32, 32)), ((2, 1, 1), (48, 48, 48), (24, 48, 48)),
        ((1, 1, 1), (16, 16, 16), (16, 16, 16)), ((2, 1, 1), (32, 16, 16), (16, 16, 16)),
        ((2, 2, 1), (32, 32, 16), (16, 16, 16))]
    runs = plan(spec)
    assert len(runs) == 2 * 5 * 2
    assert [r.id for r in runs[:4]] == ["s1-2x1x1-32x32x32-step2", "s1-2x1x1-32x32x32-step7",
                                        "s1-2x1x1-48x48x48-step2", "s1-2x1x1-48x48x48-step7"]
    assert [r.submission for r in runs] == [1] * 10 + [2] * 10
    assert len({r.id for r in runs}) == 20


def test_a_point_two_sweeps_share_runs_once(tmp_path):
    text = ISSUE_SPEC.replace('size = ["32x32x32", "48x48x48"]', 'size = ["32x16x16", "48x48x48"]')
    spec = parse_spec(text, tmp_path / "s.toml")
    assert [p.id for p in points(spec)] == ["2x1x1-32x16x16", "2x1x1-48x48x48", "1x1x1-16x16x16", "2x2x1-32x32x16"]
    assert len(plan(spec)) == 2 * 4 * 2


def test_steps_as_iters_or_itfin_not_both(tmp_path):
    """The option vocabulary's name, or CheckMPI's."""
    spec = parse_spec(ISSUE_SPEC.replace("itfin = 40", "iters = 30"), tmp_path / "s.toml")
    assert (spec.itfin, spec.icheck) == (30, 20)
    with pytest.raises(CheckmpiError, match=r"\[halo\] iters and itfin \(CheckMPI's name\) both set the number of "
                                            r"timed steps; give one of them"):
        parse_spec(ISSUE_SPEC.replace("itfin = 40", "itfin = 40\niters = 40"), tmp_path / "s.toml")
    with pytest.raises(CheckmpiError, match=r"\[halo\] args may not set --procs; the campaign sets it"):
        parse_spec(ISSUE_SPEC.replace("icheck = 20", 'icheck = 20\nargs = ["--procs", "2x1x1"]'), tmp_path / "s.toml")


def test_defaults_and_per_submission_limits(tmp_path):
    spec = parse_spec('[campaign]\nname = "d"\nrepetitions = 3\n[launch]\ntime_limit_s = [10, 20.5, 30]\n'
                      '[[sweep]]\nlocal = "8x8x8"\nnp = 2\n', tmp_path / "d.toml")
    every = [r.id for r in catalog.load("all")]  # the catalog as checkmpi-halo lists it
    assert spec.executor == "local" and spec.strategies == tuple(every) and len(every) > 11
    assert spec.itfin == 100 and spec.icheck == 100 and spec.too_slow == 10.0 and spec.slow == 1.5
    assert [spec.time_limit(k) for k in (1, 2, 3)] == [10.0, 20.5, 30.0]
    assert spec.slurm.pending_limit_s == 86400.0 and spec.slurm.poll_s == 5.0 and spec.slurm.exclusive is True


BAD = [
    ("[launch]\nranks_per_node = 2\n", "[campaign] is missing"),
    ('[campaign]\nname = "x"\n', "[[sweep]] is missing"),
    ('[campaign]\nname = "a b"\n[[sweep]]\nlocal="8x8x8"\nnp=1\n', "[campaign] name may hold letters"),
    ('[campaign]\nname = "x"\nexecutor = "pbs"\n', "[campaign] executor must be one of local, slurm, got 'pbs'"),
    ('[campaign]\nname = "x"\nrepetitions = 0\n', "[campaign] repetitions must be an integer from 1 to 10^5, got 0"),
    ('[campaign]\nname = "x"\nrepeats = 2\n', "[campaign] has unknown key 'repeats'"),
    ('[campaign]\nname = "x"\n[lanch]\n', "[lanch] is not a known table"),
    ('[campaign]\nname = "x"\nrepetitions = 2\n[launch]\ntime_limit_s = [1]\n',
     "[launch] time_limit_s lists 1 limits for 2 repetitions"),
    ('[campaign]\nname = "x"\n[launch]\ntoo_slow = 1\n', "[launch] too_slow must be a number > 1 and <= 10^6, got 1"),
    ('[campaign]\nname = "x"\n[launch]\nlauncher = "srun"\n', "'srun' needs executor = \"slurm\""),
    ('[campaign]\nname = "x"\n[halo]\nstrategies = ["step2", "step99"]\n', "unknown strategy 'step99'"),
    ('[campaign]\nname = "x"\n[halo]\nargs = ["--strategy", "step2"]\n', "[halo] args may not set --strategy"),
    ('[campaign]\nname = "x"\n[halo]\nitfin = "40"\n', "[halo] itfin must be an integer from 1 to 10^12, got '40'"),
    ('[campaign]\nname = "x"\n[[sweep]]\nprocs = "2x1x1"\nsize = "33x32x32"\n',
     "[[sweep]] 1 size 33x32x32 is not divisible by procs 2x1x1"),
    ('[campaign]\nname = "x"\n[[sweep]]\nprocs = "2x1x1"\nsize = "32x32"\n',
     "[[sweep]] 1 size expects three positive integers like 4x2x2, got '32x32'"),
    ('[campaign]\nname = "x"\n[[sweep]]\nprocs = "2x1x1"\nnp = 2\n', "[[sweep]] 1 needs either procs and size"),
    ('[campaign]\nname = "x"\n[[sweep]]\nlocal = "8x8x8"\nnp = [1, 0]\n', "[[sweep]] 1 np must be an integer from 1 to 1048576 or a list of them, got [1, 0]"),
    ('[campaign]\nname = "x"\n[[sweep]]\nlocal="8x8x8"\nnp=1\n[slurm]\nsbatch_args = "--exclusive"\n',
     "[slurm] sbatch_args must be a list"),
    ('[campaign]\nname = "x"\n[[sweep]]\nlocal="8x8x8"\nnp=1\n[slurm]\nexclusive = "yes"\n',
     "[slurm] exclusive must be true or false, got 'yes'"),
    ('[campaign]\nname = "x"\n[[sweep]]\nlocal="8x8x8"\nnp=1\n[slurm]\nexclusive = 0\n',
     "[slurm] exclusive must be true or false, got 0"),
    ('[campaign]\nname = "x"\n[[sweep]]\nlocal="8x8x8"\nnp=1\n[report]\nslow = 0.5\n',
     "[report] slow must be a number > 1"),
    ("[campaign\n", "not valid TOML"),
]

SWEEP = '[[sweep]]\nlocal = "8x8x8"\nnp = [1]\n'
# Issue 32: every string one line of text, every number bounded, nothing the campaign sets in [halo] args.
BOUNDS = [
    ('[campaign]\nname = "x"\n' + SWEEP + '[slurm]\npartition = "gpu\\ntouch /tmp/marker"\n',
     "[slurm] partition holds a control character (U+000A); spec strings are one line of text"),
    ('[campaign]\nname = "x"\n' + SWEEP + '[slurm]\nsbatch_args = ["--comment=a\\rb"]\n',
     "[slurm] sbatch_args[0] holds a control character (U+000D)"),
    ('[campaign]\nname = "x"\n[halo]\nargs = ["--warmup", "1\\u0000"]\n' + SWEEP,
     "[halo] args[1] holds a control character (U+0000)"),
    ('[campaign]\nname = "x"\n[[sweep]]\nname = "a\\u001bb"\nlocal = "8x8x8"\nnp = [1]\n',
     "[[sweep]] 1 name holds a control character (U+001B)"),
    ('[campaign]\nname = "x"\nrepetitions = 100000000\n' + SWEEP,
     "[campaign] repetitions must be an integer from 1 to 10^5, got 100000000"),
    ('[campaign]\nname = "x"\nrepetitions = 100000\n[halo]\nstrategies = ["step1", "step2"]\n' + SWEEP,
     "[campaign] makes 200000 runs (100000 repetitions x 1 points x 2 strategies), more than the 100000 a campaign "
     "may have"),
    ('[campaign]\nname = "x"\n[[sweep]]\nlocal = "8x8x8"\nnp = 1000000000\n',
     "[[sweep]] 1 np must be an integer from 1 to 1048576 or a list of them, got 1000000000"),
    ('[campaign]\nname = "x"\n[[sweep]]\nlocal = "8x8x8"\nnp = [' + ", ".join(["1"] * 1001) + "]\n",
     "[[sweep]] 1 np lists 1001 rank counts, more than the 1000 a sweep may have"),
    ('[campaign]\nname = "x"\n[halo]\nitfin = 9223372036854775808\n' + SWEEP,
     "[halo] itfin must be an integer from 1 to 10^12, got 9223372036854775808"),
    ('[campaign]\nname = "x"\n[halo]\nicheck = 0\n' + SWEEP, "[halo] icheck must be an integer from 1 to 10^12, got 0"),
    ('[campaign]\nname = "x"\n[launch]\ntime_limit_s = 1e15\n' + SWEEP,
     "[launch] time_limit_s must be a number > 0 and <= 10^7, got 1000000000000000.0"),
    ('[campaign]\nname = "x"\n[launch]\ntime_limit_s = inf\n' + SWEEP,
     "[launch] time_limit_s must be a number > 0 and <= 10^7, got inf"),
    ('[campaign]\nname = "x"\n[launch]\ntoo_slow_min_s = nan\n' + SWEEP,
     "[launch] too_slow_min_s must be a number >= 0 and <= 10^7, got nan"),
    ('[campaign]\nname = "x"\n[launch]\nranks_per_node = 2000000\n' + SWEEP,
     "[launch] ranks_per_node must be an integer from 1 to 1048576, got 2000000"),
    ('[campaign]\nname = "x"\n' + SWEEP + '[slurm]\npoll_s = 1e-300\n',
     "[slurm] poll_s must be a number >= 0.1 and <= 3600, got 1e-300"),
    ('[campaign]\nname = "x"\n' + SWEEP + '[slurm]\npending_limit_s = -inf\n',
     "[slurm] pending_limit_s must be a number > 0 and <= 10^7, got -inf"),
    ('[campaign]\nname = "x"\n' + SWEEP + '[slurm]\ngpus_per_node = 100000\n',
     "[slurm] gpus_per_node must be an integer from 0 to 1024, got 100000"),
    ('[campaign]\nname = "x"\n' + SWEEP + '[report]\nslow = inf\n', "[report] slow must be a number > 1 and <= 10^6, got inf"),
    ('[campaign]\nname = "x"\n[halo]\nargs = ["-sstep1"]\n' + SWEEP, "[halo] args may not set -s; the campaign sets it"),
    ('[campaign]\nname = "x"\n[halo]\nargs = ["-o", "elsewhere"]\n' + SWEEP, "[halo] args may not set -o;"),
    ('[campaign]\nname = "x"\n[halo]\nargs = ["--no-input"]\n' + SWEEP, "[halo] args may not set --no-input;"),
    ('[campaign]\nname = "x"\n[halo]\nargs = ["--samples=s.json"]\n' + SWEEP, "[halo] args may not set --samples;"),
    ('[campaign]\nname = "x"\n[halo]\nargs = ["--itfin=5"]\n' + SWEEP, "[halo] args may not set --itfin;"),
    # What only checkmpi-halo knows, asked at planning (once every run crashed, or a traceback mid-campaign).
    ('[campaign]\nname = "x"\n[halo]\nargs = ["--border", "ten"]\n' + SWEEP,
     "[halo] args are refused by checkmpi-halo: value of --border is not an integer: 'ten'"),
    ('[campaign]\nname = "x"\n[halo]\nargs = ["--bogus"]\n' + SWEEP,
     "[halo] args are refused by checkmpi-halo: unknown option '--bogus'"),
    ('[campaign]\nname = "x"\n[halo]\nargs = ["--version"]\n' + SWEEP,
     "[halo] args may not hold --version: checkmpi-halo would print it and run nothing"),
    ('[campaign]\nname = "x"\n[[sweep]]\nprocs = "2048x1024x1"\nsize = "2048x1024x1"\n',
     "[[sweep]] 1 procs 2048x1024x1 is 2097152 ranks, more than"),
    ('[campaign]\nname = "x"\n[[sweep]]\nprocs = "1x1x1"\nsize = ["8x8x8", "1073741824x1073741824x1073741824"]\n',
     "[[sweep]] 1 size 1073741824x1073741824x1073741824 on 1x1x1: local block 1073741824x1073741824x1073741824 is "
     "too large"),
    ("a = " + "[" * 5000 + "]" * 5000 + "\n", "nests [ and { more than 32 deep (the limit)"),
    ("a = " + "{ b = " * 40 + "1" + " }" * 40 + "\n", "nests [ and { more than 32 deep (the limit)"),
]


@pytest.mark.parametrize("text,message", BAD + BOUNDS)
def test_bad_specs_are_one_line_errors(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(CheckmpiError) as e:
        load_spec(path)
    assert message in e.value.message and str(path) in e.value.message
    assert e.value.code == 2


def test_plan_command_lists_every_run_and_submission():
    r = checkmpi("campaign", "plan", str(TINY), timeout=60)
    assert r.returncode == 0, r.stderr
    for run in plan(load_spec(TINY)):
        assert run.id in r.stdout
    assert "20 runs = 2 submissions x 5 points x 2 strategies" in flat(r.stdout)  # the title, wrapped
    assert "ranks_per_node = 2 applies to Slurm only" in flat(r.stdout)  # in the caption, wrapped at 80
    assert "one submission after another on this machine, each run with mpirun when the one before has ended" \
        in flat(r.stdout)


def test_plan_command_errors(tmp_path):
    assert_clean_error(checkmpi("campaign", "plan", str(tmp_path / "none.toml")), 2, "does not exist")
    bad = tmp_path / "bad.toml"
    bad.write_text('[campaign]\nname = "x"\nexecutor = "pbs"\n')
    assert_clean_error(checkmpi("campaign", "plan", str(bad)), 2, "executor must be one of local, slurm")
    assert_clean_error(checkmpi("campaign", "status", str(tmp_path)), 2, "is not a campaign folder")
    assert_clean_error(checkmpi("campaign", "report", str(tmp_path)), 2, "is not a campaign folder")


def test_slurm_plan_and_batch_script(tmp_path):
    text = ISSUE_SPEC.replace('executor = "local" ', 'executor = "slurm" ') + (
        '[slurm]\npartition = "gpu"\naccount = "prj"\nconstraint = "a100"\ngpus_per_node = 4\n'
        'sbatch_args = ["--exclusive"]\nsrun_args = ["--cpu-bind=cores"]\n')
    path = tmp_path / "slurm.toml"
    path.write_text(text)
    spec = load_spec(path)
    assert sbatch_options(spec, 2) == ["--job-name=checkmpi-tiny-s2", "--nodes=2", "--ntasks-per-node=2",
                                       "--time=6", "--partition=gpu", "--account=prj", "--constraint=a100",
                                       "--gpus-per-node=4", "--exclusive"]
    assert [nodes_for(n, 2) for n in (1, 2, 3, 4)] == [1, 1, 2, 2]
    runs = [r.id for r in plan(spec) if r.submission == 2]
    script = batch_script(CampaignDir(tmp_path / "dir"), spec, 2, 1, runs, Path("/opt/bin"),
                          tmp_path / "out.txt")
    lines = script.splitlines()
    assert lines[0] == "#!/bin/bash" and "#SBATCH --nodes=2" in lines and "#SBATCH --time=6" in lines
    steps = [line for line in lines if " campaign step " in line]
    assert [s.split()[6] for s in steps] == runs  # one job step per run, in order
    assert all(s.endswith("--bin /opt/bin || rc=1") for s in steps)
    assert lines[-1] == "exit $rc"
    r = checkmpi("campaign", "plan", str(path), timeout=60)
    assert r.returncode == 0, r.stderr
    assert "--nodes=2 --ntasks-per-node=2 --time=6 --partition=gpu" in flat(r.stdout)  # a cell, wrapped at 80
    # What Slurm does with the submissions: all at once, each job started when its nodes are free.
    text = flat(r.stdout)
    assert "each submission is one batch job of 2 nodes (its sbatch options below), and all 2 are submitted at " \
           "once: Slurm starts each when its nodes are free, so submissions may run at the same time" in text
    assert "a submission after another" not in text and "the submissions' jobs may run at the same time" in text
    assert "each job has its nodes to itself (sbatch --exclusive; [slurm] exclusive = false lets other jobs share " \
           "them)" in text


def test_slurm_jobs_are_exclusive_unless_the_spec_says_not(tmp_path):
    """sbatch --exclusive by default: no other job, the campaign's own submissions included, on a job's nodes."""
    slurm = ISSUE_SPEC.replace('executor = "local" ', 'executor = "slurm" ')
    runs = [r.id for r in plan(parse_spec(slurm, tmp_path / "s.toml")) if r.submission == 1]

    def script(extra: str) -> list[str]:
        spec = parse_spec(slurm + extra, tmp_path / "s.toml")
        return batch_script(CampaignDir(tmp_path / "dir"), spec, 1, 1, runs, Path("/opt/bin"),
                            tmp_path / "out.txt").splitlines()

    assert parse_spec(slurm, tmp_path / "s.toml").slurm.exclusive is True
    assert script("").count("#SBATCH --exclusive") == 1
    assert script("[slurm]\nexclusive = true\n").count("#SBATCH --exclusive") == 1
    assert not [line for line in script("[slurm]\nexclusive = false\n") if line.startswith("#SBATCH --excl")]
    # The spec's own form in sbatch_args replaces it, never doubles it.
    lines = script('[slurm]\nsbatch_args = ["--exclusive=user"]\n')
    assert [line for line in lines if line.startswith("#SBATCH --excl")] == ["#SBATCH --exclusive=user"]
    path = tmp_path / "shared.toml"
    path.write_text(slurm + "[slurm]\nexclusive = false\n")
    r = checkmpi("campaign", "plan", str(path), timeout=60)
    assert r.returncode == 0, r.stderr
    assert "other jobs may share its nodes ([slurm] exclusive = false" in flat(r.stdout)
    assert "submission 1: sbatch --job-name=checkmpi-tiny-s1 --nodes=2 --ntasks-per-node=2 --time=6" in flat(r.stdout)
    assert "--exclusive" not in r.stdout


def test_a_finished_runs_marker_left_by_an_interruption_is_dropped(tmp_path):
    """Interrupted between writing a run's record and removing its marker, a campaign leaves both; the next
    one drops the marker of a run recorded ok, and keeps that of a run with no record (it had started)."""
    from checkmpi.campaign.records import RUN_SCHEMA

    spec = parse_spec('[campaign]\nname = "m"\n[halo]\nstrategies = ["step2", "step7"]\n[[sweep]]\nlocal = "8x8x8"\n'
                      'np = 2\n', tmp_path / "s.toml")
    done, started = plan(spec)[:2]
    cdir = CampaignDir(tmp_path / "dir")
    cdir.runs_dir.mkdir(parents=True)
    cdir.write_record({"schema": RUN_SCHEMA, "run": done.id, "status": "ok"})
    for run in (done, started):
        cdir.mark_running(run.id, 1, None)
    cdir.drop_stale_markers([done, started])
    assert not cdir.marker_path(done.id).exists() and cdir.marker(started.id)["run"] == started.id


def test_sbatch_lines_quote_what_sbatch_would_split(tmp_path):
    """sbatch splits an #SBATCH line at blanks, takes quotes and backslashes, and ends it at '#': such options are
    written in double quotes; a control character (a campaign folder named with a newline) is refused."""
    slurm = ISSUE_SPEC.replace('executor = "local" ', 'executor = "slurm" ')
    spec = parse_spec(slurm + '[slurm]\npartition = "gpu x#1"\nsbatch_args = ["--comment=say \\"hi\\" \\\\o/"]\n',
                      tmp_path / "s.toml")
    runs = [r.id for r in plan(spec) if r.submission == 1]
    lines = batch_script(CampaignDir(tmp_path / "a dir"), spec, 1, 1, runs, Path("/opt/bin"),
                         tmp_path / "a dir" / "out put.txt").splitlines()
    assert '#SBATCH "--partition=gpu x#1"' in lines
    assert '#SBATCH "--comment=say \\"hi\\" \\\\o/"' in lines
    assert f'#SBATCH "--output={tmp_path}/a dir/out put.txt"' in lines
    assert [line for line in lines if not line.startswith("#")][0].startswith("export ")  # nothing before the options
    with pytest.raises(CheckmpiError, match=r"#SBATCH option '--output=.*\\nx/out.txt' holds a control character "
                       r"\(U\+000A\), which a batch script cannot carry"):
        batch_script(CampaignDir(tmp_path / "dir"), spec, 1, 1, runs, Path("/opt/bin"), tmp_path / "d\nx" / "out.txt")


def test_the_jobs_output_line_comes_first_and_escapes_sbatch_patterns(tmp_path):
    """sbatch reads every #SBATCH line as one argument list and fills %j, %x... in --output: the campaign's output
    line is the first (a value-less option at the end of sbatch_args takes none of ours) with '%' written '%%', and
    sbatch_args may not name another output; a spec string longer than 4096 characters is refused."""
    slurm = ISSUE_SPEC.replace('executor = "local" ', 'executor = "slurm" ')
    spec = parse_spec(slurm + '[slurm]\nsbatch_args = ["--comment"]\n', tmp_path / "s.toml")
    runs = [r.id for r in plan(spec) if r.submission == 1]
    lines = batch_script(CampaignDir(tmp_path / "pct_100%j"), spec, 1, 1, runs, Path("/opt/bin"),
                         tmp_path / "pct_100%j" / "slurm" / "s1-a1.out").splitlines()
    assert lines[1] == f"#SBATCH --output={tmp_path}/pct_100%%j/slurm/s1-a1.out"
    assert [line for line in lines if line.startswith("#SBATCH")][-1] == "#SBATCH --comment"
    for arg in ("--output=x.out", "-o", "-ox.out", "--output"):
        with pytest.raises(CheckmpiError, match=r"\[slurm\] sbatch_args may not set the job's output"):
            parse_spec(slurm + f'[slurm]\nsbatch_args = ["{arg}"]\n', tmp_path / "s.toml")
    assert parse_spec(slurm + '[slurm]\nsbatch_args = ["--open-mode=append", "-O"]\n', tmp_path / "s.toml")
    with pytest.raises(CheckmpiError, match=r"\[halo\] args\[0\] is 5007 characters long; at most 4096"):
        parse_spec(slurm.replace("[halo]\n", '[halo]\nargs = ["--seed=' + "1" * 5000 + '"]\n', 1), tmp_path / "s.toml")


def test_injected_partition_writes_no_batch_line(tmp_path):
    """The probe's spec: a newline in [slurm] partition is refused before anything is planned or written."""
    spec = tmp_path / "s.toml"
    spec.write_text('[campaign]\nname = "x"\nexecutor = "slurm"\n' + SWEEP
                    + '[slurm]\npartition = "gpu\\ntouch /tmp/marker"\n')
    r = checkmpi("campaign", "run", str(spec), "--dir", str(tmp_path / "c"), timeout=60)
    assert_clean_error(r, 2, f"{spec}: [slurm] partition holds a control character (U+000A); spec strings are one "
                       "line of text")
    assert not (tmp_path / "c").exists()
