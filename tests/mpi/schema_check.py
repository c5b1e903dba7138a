#!/usr/bin/env python3
"""schema_check.py FILE...: validates results files written by the native
tools against the JSON Schema their "schema" key names (schemas/ in the
repository, e.g. checkmpi.halo/5 -> schemas/checkmpi.halo-5.schema.json).
Prints each problem and exits 1 if any file does not validate."""
import json
import sys
from pathlib import Path

import jsonschema
import referencing

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"
# A schema may refer to another's definitions by file name (results and plans carry catalog rows).
REGISTRY = referencing.Registry().with_resources(
    (f.name, referencing.Resource.from_contents(json.loads(f.read_text()))) for f in SCHEMAS.glob("*.schema.json"))
failed = False
for name in sys.argv[1:]:
    doc = json.loads(Path(name).read_text())
    family, _, version = str(doc.get("schema", "")).partition("/")
    schema_file = SCHEMAS / f"{family}-{version}.schema.json"
    if not schema_file.is_file():
        print(f"{name}: no schema file {schema_file.name} for schema '{doc.get('schema')}'")
        failed = True
        continue
    validator = jsonschema.Draft202012Validator(json.loads(schema_file.read_text()), registry=REGISTRY)
    for error in sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path)):
        where = "/".join(str(p) for p in error.absolute_path) or "(top)"
        print(f"{name}: {where}: {error.message}")
        failed = True
sys.exit(1 if failed else 0)
