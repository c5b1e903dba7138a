"""Files written whole or not at all: each goes to a temporary file beside
its target, which is renamed onto the target only once complete, so a full
disk, an error or a stop never leaves a truncated file or loses the previous one."""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from checkmpi.errors import EXIT_FAILED, CheckmpiError

_counter = itertools.count()


@contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A temporary path to write `path`'s new contents to; when the block ends
    without error it is synced and renamed onto `path`, else removed. An
    OSError becomes "cannot write 'PATH': reason" (exit code 1)."""
    temp: Path | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        while temp is None:
            candidate = path.with_name(f"{path.name}.tmp.{os.getpid()}.{next(_counter)}")
            try:
                os.close(os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
                temp = candidate
            except FileExistsError:
                continue
        yield temp
        fd = os.open(temp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, path)
        temp = None
    except OSError as e:
        raise CheckmpiError(f"cannot write '{path}': {e.strerror or e}", EXIT_FAILED) from None
    finally:
        if temp is not None:
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
