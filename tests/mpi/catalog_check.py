#!/usr/bin/env python3
"""catalog_check.py HALO.json: every strategy's `traits` in checkmpi-halo's
results equal what its catalog row's traits (the results' `catalog`, through
checkmpi/catalog.py) give for the run's grid and block on one node."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from checkmpi import catalog, model  # noqa: E402
from checkmpi.results import load  # noqa: E402

run = load(sys.argv[1])
rows = catalog.rows_of_run(run)
case = model.Case(run.dims, run.local, model.Geometry.of(run.config), run.precision, ranks_per_node=run.nprocs,
                  compute=str(run.config["compute"]), self_copy=bool(run.config["self_copy"]))
bad = []
if len(rows) != len(run.ran()):
    bad.append(f"{len(run.ran())} strategies ran, {len(rows)} found in the catalog")
for s in run.ran():
    want = model.engine_traits(rows[s.id], case)
    got = {k: s.raw["traits"][k] for k in want}
    if got != want:
        bad.append(f"{s.id}: engine {got} != catalog {want}")
print("\n".join(bad) or f"{len(rows)} strategies agree")
sys.exit(1 if bad else 0)
