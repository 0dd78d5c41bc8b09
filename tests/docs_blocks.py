"""The fenced code blocks of README.md and docs/*.md, for the tests that run or check them (tests/test_docs.py,
tests/spark/test_docs_examples.py, tests/dbt/test_install.py)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)


@dataclass(frozen=True)
class Block:
    doc: str  # path relative to the checkout, e.g. "docs/dbt.md"
    line: int  # line of the opening fence
    lang: str  # the fence's info string ("" for plain text)
    code: str
    section: str  # the nearest heading above the block

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks(doc: Path | None = None) -> list[Block]:
    out: list[Block] = []
    for path in [doc] if doc else documents():
        text = path.read_text()
        for m in _FENCE.finditer(text):
            before = text[:m.start()]
            headings = re.findall(r"^#{1,6} (.+)$", _FENCE.sub("", before), re.M)  # not comments in code
            out.append(Block(str(path.relative_to(ROOT)), before.count("\n") + 1, m.group(1), m.group(2),
                             headings[-1].strip() if headings else ""))
    return out


def block_with(doc: str, marker: str) -> Block:
    """The one block of `doc` that contains `marker`."""
    found = [b for b in blocks(ROOT / doc) if marker in b.code]
    assert len(found) == 1, f"{doc}: expected one code block containing {marker!r}, found {len(found)}"
    return found[0]
