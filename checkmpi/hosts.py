"""`--hostfile FILE` and `--hosts LIST` of `checkmpi run` and `checkmpi p2p`: checked, then given to the launcher in
its own spelling (Open MPI: --hostfile, --host; MPICH's hydra: -f, -hosts). Both strings reach the launcher's
command line, so a host is a plain name and a hostfile a readable regular file."""

from __future__ import annotations

import argparse
import os
import re
import stat
from pathlib import Path

from checkmpi.errors import CheckmpiError
from checkmpi.native import Launcher

MAX_HOSTS = 1 << 16  # names in --hosts
MAX_HOSTFILE_BYTES = 1 << 20
# A host name (RFC 1123 labels, dots between them) with an optional slot count, as both launchers read it.
HOST_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*")
_HOST = re.compile(HOST_NAME.pattern + r"(:[1-9][0-9]{0,6})?")
# The launchers' own options that name hosts: given in --mpi-args beside --hostfile or --hosts, they would contradict.
HOST_OPTIONS = {"--hostfile", "--machinefile", "--default-hostfile", "--host", "-H", "-hostfile", "-machinefile",
                "-f", "-hosts", "-host"}


def given(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "hostfile", None) or getattr(args, "hosts", None))


def check_hosts(text: str) -> list[str]:
    """--hosts: comma-separated names, each optionally NAME:SLOTS."""
    names = text.split(",")
    if len(names) > MAX_HOSTS:
        raise CheckmpiError(f"--hosts names {len(names)} hosts; at most {MAX_HOSTS}")
    for name in names:
        if not name:
            raise CheckmpiError(f"--hosts {text!r} has an empty name; give H1,H2,... (each NAME or NAME:SLOTS)")
        if len(name) > 253 + 8 or not _HOST.fullmatch(name):
            raise CheckmpiError(f"--hosts: {name!r} is not a host name (letters, digits, '-' and '.', at most 253 "
                                "characters; optionally :SLOTS)")
    return names


def check_hostfile(text: str) -> Path:
    """--hostfile: a readable regular file (a link is followed, but must end at one) of at most 1 MiB that names
    at least one host; its absolute path, as the launcher may run from another folder."""
    if not text or "\n" in text or "\x00" in text:
        raise CheckmpiError(f"--hostfile {text!r} is not a file name")
    path = Path(text)
    try:
        info = path.stat()
    except OSError as e:
        raise CheckmpiError(f"--hostfile '{text}': {e.strerror or e}") from None
    if not stat.S_ISREG(info.st_mode):
        what = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file (a device, pipe or socket)"
        link = f" (a link to '{os.path.realpath(path)}')" if path.is_symlink() else ""
        raise CheckmpiError(f"--hostfile '{text}' is {what}{link}; give a file of host names")
    if info.st_size > MAX_HOSTFILE_BYTES:
        raise CheckmpiError(f"--hostfile '{text}' has {info.st_size} bytes; at most {MAX_HOSTFILE_BYTES}")
    try:
        content = path.read_bytes()
    except OSError as e:
        raise CheckmpiError(f"--hostfile '{text}' cannot be read: {e.strerror or e}") from None
    lines = [line.split(b"#", 1)[0].strip() for line in content.splitlines()]
    if not any(lines):
        raise CheckmpiError(f"--hostfile '{text}' names no host (every line is empty or a # comment)")
    return path.resolve()


def check(args: argparse.Namespace, mpi_args: list[str]) -> None:
    """The options' values, and that they and --mpi-args do not both name hosts (exit 2 before anything runs)."""
    hostfile, hosts = getattr(args, "hostfile", None), getattr(args, "hosts", None)
    if hostfile is not None and hosts is not None:
        raise CheckmpiError(f"--hostfile {hostfile} and --hosts {hosts} both say where ranks go; give one of them")
    if hostfile is not None:
        check_hostfile(hostfile)
    if hosts is not None:
        check_hosts(hosts)
    if given(args):
        clash = next((w for w in mpi_args if w.split("=", 1)[0] in HOST_OPTIONS), None)
        if clash is not None:
            raise CheckmpiError(f"--mpi-args names hosts too ({clash}); give them once, in --hostfile or --hosts, "
                                "or in --mpi-args")


def launcher_args(args: argparse.Namespace, launcher: Launcher) -> list[str]:
    """--hostfile or --hosts in `launcher`'s spelling ([] when neither is given)."""
    if not given(args):
        return []
    if launcher.kind == "srun":
        raise CheckmpiError("--hostfile and --hosts are for mpirun and mpiexec; under srun the allocation places "
                            "the ranks (give srun's --nodelist in --mpi-args)")
    if args.hostfile is not None:
        path = str(check_hostfile(args.hostfile))
        return ["-f", path] if launcher.flavor == "mpich" else ["--hostfile", path]
    names = ",".join(check_hosts(args.hosts))
    return ["-hosts", names] if launcher.flavor == "mpich" else ["--host", names]
