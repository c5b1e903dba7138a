"""checkmpi run/p2p --hostfile FILE and --hosts LIST (issue 31): checked before anything runs, given to the launcher
in its own spelling, and a run that names hosts is not held to this node's ranks per CPU."""

from __future__ import annotations

import argparse
import os

import pytest
from conftest import assert_clean_error, checkmpi

from checkmpi import hosts
from checkmpi.errors import CheckmpiError
from checkmpi.native import Launcher, mpi_command

OPENMPI = Launcher("/usr/bin/mpirun", "openmpi")
MPICH = Launcher("/usr/bin/mpiexec.mpich", "mpich")
SRUN = Launcher("/usr/bin/srun", "openmpi", kind="srun")


def namespace(hostfile=None, hosts_=None) -> argparse.Namespace:
    return argparse.Namespace(hostfile=hostfile, hosts=hosts_, mpi_args="")


def test_each_launcher_gets_its_own_spelling(tmp_path):
    f = tmp_path / "hostfile"
    f.write_text("# two nodes\ncmpi-n0 slots=1\ncmpi-n1 slots=1\n")
    assert hosts.launcher_args(namespace(hostfile=str(f)), OPENMPI) == ["--hostfile", str(f)]
    assert hosts.launcher_args(namespace(hostfile=str(f)), MPICH) == ["-f", str(f)]
    assert hosts.launcher_args(namespace(hosts_="n0,n1:2,a.b-c"), OPENMPI) == ["--host", "n0,n1:2,a.b-c"]
    assert hosts.launcher_args(namespace(hosts_="n0,n1"), MPICH) == ["-hosts", "n0,n1"]
    assert hosts.launcher_args(namespace(), OPENMPI) == []
    with pytest.raises(CheckmpiError, match="under srun the allocation places the ranks"):
        hosts.launcher_args(namespace(hosts_="n0,n1"), SRUN)
    # A relative hostfile reaches the launcher as an absolute path; the hosts come before --mpi-args.
    cwd = os.getcwd()
    try:
        os.chdir(tmp_path)
        assert hosts.launcher_args(namespace(hostfile="hostfile"), OPENMPI) == ["--hostfile", str(f.resolve())]
    finally:
        os.chdir(cwd)
    cmd, _ = mpi_command(OPENMPI, 2, ["tool"], ["--host", "n0,n1", "--bind-to", "none"])
    assert cmd[-5:] == ["--host", "n0,n1", "--bind-to", "none", "tool"]


@pytest.mark.parametrize("value", ["n0;rm -rf x", "-oProxyCommand=x", "n0,,n1", "", "n0 n1", "n0:0", "n0:x", "a..b",
                                   "n0,$(id)", "-n0", "n0-", "x" * 254, "n0\n"])
def test_host_names_are_plain(value):
    with pytest.raises(CheckmpiError, match="--hosts"):
        hosts.check_hosts(value)


def test_hostfile_must_be_a_readable_regular_file(tmp_path):
    with pytest.raises(CheckmpiError, match=r"--hostfile '.*missing': No such file"):
        hosts.check_hostfile(str(tmp_path / "missing"))
    with pytest.raises(CheckmpiError, match="is a folder"):
        hosts.check_hostfile(str(tmp_path))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(CheckmpiError, match=r"not a regular file \(a device, pipe or socket\)"):
        hosts.check_hostfile(str(fifo))
    link = tmp_path / "link"
    link.symlink_to(fifo)
    with pytest.raises(CheckmpiError, match=r"not a regular file .* \(a link to '.*fifo'\)"):
        hosts.check_hostfile(str(link))
    empty = tmp_path / "empty"
    empty.write_text("# nothing\n\n   \n")
    with pytest.raises(CheckmpiError, match="names no host"):
        hosts.check_hostfile(str(empty))
    big = tmp_path / "big"
    big.write_bytes(b"n0\n" * (hosts.MAX_HOSTFILE_BYTES // 3 + 1))
    with pytest.raises(CheckmpiError, match=f"at most {hosts.MAX_HOSTFILE_BYTES}"):
        hosts.check_hostfile(str(big))
    good = tmp_path / "good"
    good.write_text("n0\n")
    (tmp_path / "to-good").symlink_to(good)
    assert hosts.check_hostfile(str(tmp_path / "to-good")) == good.resolve()
    if os.geteuid() != 0:  # root reads any file
        good.chmod(0)
        with pytest.raises(CheckmpiError, match="cannot be read"):
            hosts.check_hostfile(str(good))


def test_command_line_errors(tmp_path):
    f = tmp_path / "hostfile"
    f.write_text("n0\nn1\n")
    for command in (["run"], ["p2p", "pingpong"]):
        assert_clean_error(checkmpi(*command, "--hosts", "n0;reboot"), 2, "--hosts: 'n0;reboot' is not a host name")
        assert_clean_error(checkmpi(*command, "--hostfile", str(tmp_path / "nope")), 2,
                           f"--hostfile '{tmp_path / 'nope'}': No such file or directory")
        assert_clean_error(checkmpi(*command, "--hostfile", str(f), "--hosts", "n0,n1"), 2,
                           "both say where ranks go; give one of them")
        assert_clean_error(checkmpi(*command, "--hosts", "n0,n1", "--mpi-args", "--host n2"), 2,
                           "--mpi-args names hosts too (--host)")


def test_hosts_lift_this_nodes_ranks_per_cpu_limit(tmp_path):
    """--np far above 4 ranks per CPU of this node is refused without hosts, and goes on to the launch with them
    (here to a missing tool: exit 1, not the refusal's 2)."""
    np = str(4 * (os.cpu_count() or 1) + 1)
    refused = checkmpi("p2p", "pingpong", "--np", np, "--bin", str(tmp_path))
    assert_clean_error(refused, 2, f"--np {np} is more ranks than this node places", "give --hostfile or --hosts")
    (tmp_path / "hostfile").write_text("n0\nn1\n")
    for option in (["--hosts", "n0,n1"], ["--hostfile", str(tmp_path / "hostfile")]):
        r = checkmpi("p2p", "pingpong", "--np", np, "--bin", str(tmp_path), *option)
        assert_clean_error(r, 1, "checkmpi-p2p")
        assert "more ranks than this node places" not in r.stderr
