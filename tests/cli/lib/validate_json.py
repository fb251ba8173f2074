#!/usr/bin/python3
"""Validates JSON documents against one of the JSON Schemas in docs/ with python3-jsonschema.

    validate_json.py SCHEMA DOCUMENT...

References between the schemas (plan.schema.json → check.schema.json) resolve to the files next
to SCHEMA. Prints every violation as `DOCUMENT: /json/pointer: message`; exit 1 when any.
"""
import json
import pathlib
import sys

import jsonschema


def validator_for(schema_path):
    schemas = {p.as_uri(): json.loads(p.read_text()) for p in schema_path.parent.glob("*.schema.json")}
    schema = schemas[schema_path.as_uri()]
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    try:  # jsonschema >= 4.18
        from referencing import Registry
        from referencing.jsonschema import DRAFT202012

        registry = Registry().with_resources(
            (uri, DRAFT202012.create_resource(s)) for uri, s in schemas.items())
        return cls({"$id": schema_path.as_uri(), **schema}, registry=registry)
    except ImportError:  # Debian bookworm's 4.10
        resolver = jsonschema.RefResolver(base_uri=schema_path.as_uri(), referrer=schema, store=schemas)
        return cls(schema, resolver=resolver)


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    validator = validator_for(pathlib.Path(argv[1]).resolve())
    bad = 0
    for path in argv[2:]:
        try:
            doc = json.loads(pathlib.Path(path).read_text())
        except (OSError, ValueError) as e:
            print(f"{path}: not a JSON document: {e}")
            bad += 1
            continue
        for error in sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path)):
            pointer = "/" + "/".join(str(p) for p in error.absolute_path)
            print(f"{path}: {pointer}: {error.message}")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
