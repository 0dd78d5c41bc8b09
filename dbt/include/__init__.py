"""A namespace shared with the installed dbt-core / dbt-adapters packages.

This repository's `dbt/` only adds `dbt.adapters.hudi` and `dbt.include.hudi`. When the checkout's root is on
`sys.path` (running from the repository), this folder would otherwise hide the installed `dbt` package:
`extend_path` adds every other `dbt/...` folder on `sys.path` to this package's path.
"""
from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)
