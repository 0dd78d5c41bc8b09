"""Print the timeline of every Hudi table under a folder (default: this project's spark-warehouse/)."""
from __future__ import annotations

import sys
from pathlib import Path

from hudi_engine.spark import timeline_rows

COLUMNS = [("instant", 17), ("action", 13), ("state", 9), ("operation", 16), ("inserts", 7), ("updates", 7),
           ("deletes", 7), ("files", 5), ("bytes", 9)]


def hudi_tables(root: Path) -> list[Path]:
    """The tables under `root`, not their metadata tables (`<table>/.hoodie/metadata`)."""
    return sorted(p.parent for p in root.rglob(".hoodie") if (p / "hoodie.properties").is_file()
                  and ".hoodie" not in p.parent.parts)


def show(table: Path) -> None:
    print(f"\n{table.name}  ({table})")
    print("  " + "  ".join(name.ljust(width) for name, width in COLUMNS))
    for r in timeline_rows(str(table)):
        values = [r.instant, r.action, r.state, r.operation or "", r.num_inserts, r.num_updates, r.num_deletes,
                  r.files_written, r.bytes_written]
        print("  " + "  ".join(("" if v is None else str(v)).ljust(w) for v, (_, w) in zip(values, COLUMNS)))


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent / "spark-warehouse"
    tables = hudi_tables(root)
    if not tables:
        print(f"no Hudi tables under {root}", file=sys.stderr)
        return 1
    print(f"Timelines of the {len(tables)} Hudi tables under {root}:")
    for table in tables:
        show(table)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
