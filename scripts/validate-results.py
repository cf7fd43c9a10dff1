#!/usr/bin/env python3
"""Validate boris's structured results with Python's jsonschema, as draft-07
and as 2020-12 (the two drafts MCP clients validate outputSchema with).

    go test ./blackbox -run 'TestBorisGolden|TestCodexGolden|TestClaudeStructured' -results-dump=/tmp/results
    python3 scripts/validate-results.py /tmp/results

Each file holds one answer: its tool, isError, the tool's outputSchema and
the structuredContent. Exits non-zero on the first answer a validator
refuses."""
import json
import pathlib
import sys

import jsonschema

checked = 0
for path in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    rec = json.loads(path.read_text())
    for cls in (jsonschema.Draft7Validator, jsonschema.Draft202012Validator):
        cls.check_schema(rec["schema"])
        errors = list(cls(rec["schema"]).iter_errors(rec["instance"]))
        if errors:
            print(f"{path.name} ({rec['tool']}, {cls.__name__}): {errors[0].message}")
            sys.exit(1)
    checked += 1
if checked == 0:
    sys.exit("no answers found")
print(f"{checked} answers valid under draft-07 and 2020-12")
