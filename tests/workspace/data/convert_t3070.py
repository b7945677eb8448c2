"""Turn the ``match`` rows of git's ``t/t3070-wildmatch.sh`` into ``t3070.jsonl``.

Run: ``python tests/workspace/data/convert_t3070.py t3070-wildmatch.sh > t3070.jsonl``.
The rows are test data (git's own expectations); this harness around them is ours. Each row
keeps the columns that apply without case folding: ``wildmatch`` (``WM_PATHNAME``, how
``.gitignore`` matches patterns holding a slash) and ``pathmatch`` (no flags, how it matches a
pattern without one against a name).
"""

from __future__ import annotations

import json
import shlex
import sys


def rows(script: str) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    lines = script.split("\n")
    index = 0
    while index < len(lines):
        start = index
        line = lines[index]
        while line.endswith("\\") and index + 1 < len(lines):
            index += 1
            line = line[:-1] + lines[index]
        index += 1
        if not line.startswith("match "):
            continue
        words = shlex.split(line)[1:]
        if len(words) == 6:
            glob, _, path, _, text, pattern = words
        elif len(words) == 10:
            glob, _, path, _, _, _, _, _, text, pattern = words
        else:
            raise SystemExit(f"line {start + 1}: unexpected row {line!r}")
        out.append(
            {
                "line": start + 1,
                "text": text,
                "pattern": pattern,
                "wildmatch": int(glob),
                "pathmatch": int(path),
            }
        )
    return out


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as handle:
        for row in rows(handle.read()):
            print(json.dumps(row, ensure_ascii=False))
