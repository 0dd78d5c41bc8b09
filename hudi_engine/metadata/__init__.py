"""Hudi's metadata table (`.hoodie/metadata`): its `files` partition read (`table.py`) and kept up to date by this
engine's commits (`writer.py`); the records it holds (`records.py`). FORMAT.md, Metadata table."""
