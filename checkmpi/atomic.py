"""Files written whole or not at all: each goes to a temporary file beside
its target, which is renamed onto the target only once complete, so a full
disk, an error or a stop never leaves a truncated file or loses the previous one."""

from __future__ import annotations

import glob
import itertools
import json
import os
import re
import shutil
import signal
import stat
import tempfile
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from checkmpi.errors import EXIT_FAILED, CheckmpiError

_counter = itertools.count()
_live: set[Path] = set()  # temporaries being written, removed by the signal handlers below
TEMP = re.compile(r".+\.tmp\.(\d+)\.\d+")  # NAME.tmp.PID.N, as checkmpi-halo and checkmpi-p2p name theirs too
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"))


def refuse_odd_target(path: Path) -> None:
    """Outputs replace regular files or make new ones: never a symbolic link (the file it points at would stay
    as it was while the link became a file), a device, a pipe or a folder."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as e:
        raise CheckmpiError(f"cannot write '{path}': {e.strerror or e}", EXIT_FAILED) from None
    why = "a symbolic link" if stat.S_ISLNK(mode) else next((w for test, w in _KINDS if test(mode)), None)
    if why is None and not stat.S_ISREG(mode):
        why = "not a regular file"
    if why is not None:
        raise CheckmpiError(f"cannot write '{path}': {why}; give a new path or a regular file", EXIT_FAILED)


def make_folder(path: Path) -> None:
    """`path` and its parents, or "cannot write 'PATH': reason" (exit code 1)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CheckmpiError(f"cannot write '{path}': {e.strerror or e}", EXIT_FAILED) from None


def pid_alive(pid: int) -> bool:
    """Whether process `pid` runs on this machine (someone else's counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # someone else's: alive
        pass
    return True


def remove_stale_temporaries(paths: Iterable[Path]) -> list[Path]:
    """Removes those of `paths` named as temporaries (NAME.tmp.PID.N) whose writer no longer runs on this
    machine: what a writer killed by SIGKILL left. Returns what was removed."""
    removed = []
    for p in paths:
        m = TEMP.fullmatch(p.name)
        if m and int(m.group(1)) != os.getpid() and not pid_alive(int(m.group(1))):
            try:
                p.unlink()
                removed.append(p)
            except OSError:
                pass
    return removed


def _remove_live(signum: int, frame: Any, previous: Any) -> None:
    """A SIGTERM or SIGHUP while a file is written: its temporary goes, then the signal does what it did
    (ignored, the write goes on)."""
    if previous == signal.SIG_IGN:
        return
    for temp in list(_live):
        try:
            temp.unlink()
        except OSError:
            pass
    if callable(previous):
        previous(signum, frame)
    elif previous == signal.SIG_DFL:
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)


@contextmanager
def _cleaning_on_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP remove the temporaries in flight (SIGINT raises KeyboardInterrupt, which does)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        old = signal.getsignal(sig)
        previous[sig] = signal.signal(sig, lambda s, f, old=old: _remove_live(s, f, old))
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


@contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A temporary path to write `path`'s new contents to; when the block ends
    without error it is synced and renamed onto `path`, else removed (also on
    SIGTERM and SIGHUP). An OSError becomes "cannot write 'PATH': reason"
    (exit code 1), and so does a `path` that is a symbolic link or anything
    but a regular file. Temporaries of `path` left by a killed writer go."""
    temp: Path | None = None
    refuse_odd_target(path)
    with _cleaning_on_signals():
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            remove_stale_temporaries(path.parent.glob(f"{glob.escape(path.name)}.tmp.*"))
            while temp is None:
                candidate = path.with_name(f"{path.name}.tmp.{os.getpid()}.{next(_counter)}")
                try:
                    os.close(os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
                    temp = candidate
                    _live.add(temp)
                except FileExistsError:
                    continue
            yield temp
            fd = os.open(temp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temp, path)
            _live.discard(temp)
            temp = None
        except OSError as e:
            raise CheckmpiError(f"cannot write '{path}': {e.strerror or e}", EXIT_FAILED) from None
        finally:
            if temp is not None:
                _live.discard(temp)
                temp.unlink(missing_ok=True)


def write_text(path: Path, text: str) -> None:
    with replacing(path) as temp:
        temp.write_text(text, encoding="utf-8")


def write_json(path: Path, doc: Any) -> None:
    write_text(path, json.dumps(doc, indent=1) + "\n")


def refuse_inputs(path: Path, inputs: Iterable[Path], option: str) -> None:
    """An output that is one of the command's input files would destroy it."""
    for source in inputs:
        if path.exists() and source.exists() and os.path.samefile(path, source):
            raise CheckmpiError(f"{option} '{path}' is the input file '{source}'; refusing to write over it")


@contextmanager
def earlier_files_kept(files: Iterable[Path], folders: Iterable[Path], keep_in: Path) -> Iterator[None]:
    """A job that replaces `files` and the files in `folders` over several steps (checkmpi run's launches):
    until the block ends without an exception, the files there before are kept aside (hard links, else
    copies, in a folder of `keep_in`); an exception or a stop puts them back and removes what the job added
    there, so a failed run leaves the earlier run's files as they were."""
    files, folders = list(files), list(folders)

    def present() -> list[Path]:
        found = [f for f in files if f.is_file()]
        for folder in folders:
            if folder.is_dir():
                found += [p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()]
        return found

    earlier = present()
    make_folder(keep_in)
    kept = Path(tempfile.mkdtemp(prefix=".checkmpi-kept-", dir=keep_in))
    try:
        aside = {}
        for k, path in enumerate(earlier):
            aside[path] = kept / str(k)
            try:
                os.link(path, aside[path])
            except OSError:  # another file system, or no hard links there
                shutil.copy2(path, aside[path])
        try:
            yield
        except BaseException:
            before = set(earlier)
            for path in present():
                if path not in before:
                    path.unlink(missing_ok=True)
            for path, copy in aside.items():
                path.parent.mkdir(parents=True, exist_ok=True)
                os.replace(copy, path)
            raise
    finally:
        shutil.rmtree(kept, ignore_errors=True)
