"""Limits on every number and text the checkmpi command takes (docs/reliability.md, "Bounds"): each check
refuses with one line naming the value and the limit (CheckmpiError, exit 2)."""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any, Callable

from checkmpi.errors import CheckmpiError

MAX_SECONDS = 1e7  # any time value: about 116 days (checkmpi-halo's --watchdog has the same limit)
MAX_NP = 1 << 20  # ranks of a run or a campaign point
MAX_RUNS = 100_000  # runs of a campaign
MAX_STEPS = 10**12  # itfin, icheck and the like (checkmpi-halo refuses a run of over an hour long before)
MAX_JSON_DEPTH = 64  # nesting of [ and { in a JSON input (the tools write 6 at most)
MAX_TOML_DEPTH = 32  # nesting of [ and { in a campaign spec
MAX_INPUT_BYTES = 1 << 30  # a results file, profile, report or spec read whole (the tools' are megabytes at most)
# A decimal number: no nan, inf, hexadecimal or digit separators.
_DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # all but tab and newline


def number(value: Any, name: str, most: float, least: float = 0.0, unit: str = "", or_equal: bool = False) -> float:
    """A finite number above `least` (or equal to it with or_equal) and at most `most`; value: the text given
    (decimal only) or a number already parsed."""
    if isinstance(value, str):
        parsed = float(value) if _DECIMAL.fullmatch(value) else math.nan
        shown = repr(value)
    else:
        parsed = math.nan if isinstance(value, bool) or not isinstance(value, (int, float)) else float(value)
        shown = repr(value) if not isinstance(value, (int, float)) or isinstance(value, bool) else f"{value:g}"
    if not (least < parsed or (or_equal and least == parsed)) or not parsed <= most:
        raise CheckmpiError(f"{name} must be a number{(' of ' + unit) if unit else ''} "
                            f"{'at least' if or_equal else 'above'} {least:g} and at most {power(most)}, got {shown}")
    return parsed


def power(x: float) -> str:
    """10^7 for 1e7; other numbers as they are (integers in full)."""
    exponent = round(math.log10(x)) if x > 0 else 0
    if exponent >= 5 and x == 10.0 ** exponent:
        return f"10^{exponent}"
    return str(x) if isinstance(x, int) else f"{x:g}"


def integer(value: Any, name: str, most: int, least: int = 1) -> int:
    """An integer from least to most (a TOML or JSON integer, not a boolean)."""
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= most:
        raise CheckmpiError(f"{name} must be an integer from {least} to {most}, got {value!r}")
    return value


def at_most(value: int | None, name: str, most: int) -> None:
    """An integer option's upper limit (its lower one is checked where it is used)."""
    if value is not None and value > most:
        raise CheckmpiError(f"{name} must be at most {power(most)}, got {value}")


def option(name: str, most: float, unit: str = "") -> Callable[[str], float]:
    """argparse type of a number option: above 0 and at most `most`, decimal."""
    def parse(text: str) -> float:
        return number(text, name, most, unit=unit)
    parse.__name__ = name
    return parse


def control_character(text: str) -> str | None:
    """The first control character of `text` (tab and newline allowed) as U+XXXX, or None."""
    m = _CONTROL.search(text)
    return None if m is None else f"U+{ord(m.group()):04X}"


_STRUCTURE = re.compile(r"""\\.|["'#\n\[\]{}]""")  # an escape pair, a quote, a comment's start or end, a bracket


def check_depth(text: str, where: str, limit: int) -> None:
    """Refuses text nested deeper than `limit` ([ and { outside strings and comments) before a parser recurses
    into it."""
    if text.count("[") + text.count("{") <= limit:
        return
    depth, quote = 0, ""
    for m in _STRUCTURE.finditer(text):
        ch = m.group()
        if quote:
            if ch == quote or (ch == "\n" and quote == "#"):
                quote = ""
        elif ch in "[{":
            depth += 1
            if depth > limit:
                raise CheckmpiError(f"{where} nests [ and {{ more than {limit} deep (the limit)")
        elif ch in "]}":
            depth -= 1
        elif ch in "\"'#":
            quote = ch


def load_json(text: str, where: str, malformed: str) -> Any:
    """JSON from `text` (the file `where`): nesting limited, NaN, Infinity and integers beyond 64 bits refused
    with the key named after `malformed` ("malformed results in 'FILE'"); json.JSONDecodeError on bad syntax."""
    check_depth(text, f"'{where}'", MAX_JSON_DEPTH)
    try:
        doc = json.loads(text)
    except RecursionError:  # nesting check_depth could not see: never expected
        raise CheckmpiError(f"'{where}' nests [ and {{ more than {MAX_JSON_DEPTH} deep (the limit)") from None
    except json.JSONDecodeError:
        raise
    except ValueError:  # Python's limit on the digits of an integer it converts
        digits = getattr(sys, "get_int_max_str_digits", lambda: 4300)()
        raise CheckmpiError(f"{malformed}: a number of more than {digits} digits") from None
    path = non_finite(doc)
    if path is not None:
        raise CheckmpiError(f"{malformed}: {path[0] or 'the document'} is {path[1]}")
    return doc


def non_finite(doc: Any, where: str = "") -> tuple[str, str] | None:
    """The key path (results[1].timers.loop.max) of the first NaN, infinite number or integer beyond 64 bits (no
    tool writes one; as a float it would overflow), and what it is; or None."""
    if isinstance(doc, float) and not math.isfinite(doc):
        return where, repr(doc).replace("nan", "NaN").replace("inf", "Infinity") + ", not a finite number"
    if isinstance(doc, int) and not isinstance(doc, bool) and not -2**63 <= doc < 2**64:
        return where, f"an integer of {doc.bit_length()} bits, more than 64"
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for k, v in items:
        found = non_finite(v, f"{where}[{k}]" if isinstance(k, int) else f"{where}.{k}".lstrip("."))
        if found is not None:
            return found
    return None
