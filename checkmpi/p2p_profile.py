"""A machine profile built from the older inputs of `checkmpi predict`: a
ping-pong (Hockney) or LogGP result, optionally a datatype result, and a copy
bandwidth (--copy-bandwidth, a halo run's memcpy probe, or a default).

What these inputs do not measure is derived as docs/model.md ("Profiles from
--p2p") says: the self-exchange and packing from the copy bandwidth, the
barrier as ceil(log2 P) message latencies.
"""

from __future__ import annotations

from pathlib import Path

from checkmpi.errors import CheckmpiError
from checkmpi.machine import (BarrierPoint, CopyPoint, Datatype, Direction, Link, LogGP, Machine, Memory, Pack,
                              Segment, SelfExchange)
from checkmpi.results import HaloRun, P2PRun, opt_float

# Bytes read + written per second assumed for copies when no figure is given.
DEFAULT_COPY_BANDWIDTH = 10e9
CACHE_LINE = 64  # bytes: packing an x plane touches one line per element


def link_of(p2ps: list[P2PRun]) -> Link:
    """The first ping-pong's Hockney fit, else the first LogGP fit (one segment)."""
    for run in p2ps:
        hockney = run.fits.get("hockney") or {}
        if run.mode == "pingpong" and hockney.get("segments"):
            segs = [(float(s["min_size"]), float(s["max_size"]), float(s["alpha"]), opt_float(s["beta"]))
                    for s in hockney["segments"]]
            if any(not beta > 0 or alpha < 0 for _, _, alpha, beta in segs):  # null beta: flat times
                raise CheckmpiError(f"'{run.path}': Hockney fit has alpha < 0 or no positive beta; cannot predict")
            segs.sort()
            return Link(tuple(Segment(int(a), int(b), al, be) for a, b, al, be in segs), None, str(run.path))
    for run in p2ps:
        fit = run.fits.get("loggp")
        if run.mode == "loggp" and fit:
            try:
                p = LogGP(*(float(fit[k]) for k in ("L", "o_s", "o_r", "g", "G")))
            except (KeyError, TypeError, ValueError):
                raise CheckmpiError(f"'{run.path}': LogGP fit lacks one of L, o_s, o_r, g, G") from None
            if not p.G > 0:
                raise CheckmpiError(f"'{run.path}': LogGP fit has no positive G; cannot predict")
            # L alone may fit a little below 0 (a real fit here: -7.6e-8 s); what the model adds up may not.
            if p.o_s < 0 or p.o_r < 0 or p.L + p.o_s + p.o_r < 0:
                raise CheckmpiError(f"'{run.path}': LogGP fit has o_s {p.o_s:.3g} s, o_r {p.o_r:.3g} s and L + o_s "
                                    f"+ o_r {p.L + p.o_s + p.o_r:.3g} s: a negative time; cannot predict")
            return Link((Segment(0, 2**62, p.L + p.o_s + p.o_r, 1.0 / p.G),), p, str(run.path))
    names = ", ".join(f"{r.path} ({r.mode})" for r in p2ps) or "none"
    raise CheckmpiError(f"prediction needs a ping-pong result with a Hockney fit or a LogGP result; got {names}")


def datatype_of(p2ps: list[P2PRun]) -> Datatype | None:
    for run in p2ps:
        fit = run.fits.get("datatype")
        if run.mode == "datatype" and fit and fit.get("O") is not None:  # no O: too few sizes to fit
            return Datatype(float(fit.get("o") or 0.0), float(fit["O"]), str(run.path))
    return None


def copy_bandwidth_for(run: HaloRun | None, given: float | None) -> tuple[float, str]:
    """The copy bandwidth to use and where it came from: flag, the run's probe, default."""
    if given is not None:
        return given, "--copy-bandwidth"
    if run is not None and run.memcpy_bandwidth is not None and run.memcpy_bandwidth.mean > 0:
        return run.memcpy_bandwidth.mean, f"memcpy probe in {run.path.name}"
    return DEFAULT_COPY_BANDWIDTH, "default"


def machine_from_p2p(p2ps: list[P2PRun], bandwidth: tuple[float, str], real: int) -> Machine:
    """A machine from ping-pong (or LogGP) results and a copy bandwidth, for numbers of `real` bytes (a plan's or
    a run's `real_bytes`: packing an x plane moves a cache line per number)."""
    link = link_of(p2ps)
    bw, origin = bandwidth
    plane = Direction(bw / 2, bw / 2)  # payload read once and written once
    x = Direction(bw * real / (CACHE_LINE + real), bw * real / (CACHE_LINE + real))
    lat = link.segment(0).alpha
    source = f"copy bandwidth {bw / 1e9:.2f} GB/s ({origin})"
    return Machine(
        path=Path(link.source), context={"ranks_per_node": 1, "cores_per_node": None, "derived_from": "p2p"},
        intra=link, inter=None, self_exchange=SelfExchange(0.0, bw / 2, source),
        barrier=(BarrierPoint(2, lat), BarrierPoint(4, 2 * lat)), datatype=datatype_of(p2ps),
        memory=Memory((CopyPoint(1, bw),), source), pack_host=Pack(x, plane, plane, (0, 0, 0), source),
        pack_cuda=None, raw={})
