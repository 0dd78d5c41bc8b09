"""Names of the real Hudi tables in ../shared/conformance/v6 (zip stems), for parametrizing tests."""
from __future__ import annotations

V6_TABLES = [
    "cow_v6_complexkeygen_hivestyle",
    "cow_v6_empty",
    "cow_v6_nonpartitioned",
    "cow_v6_simplekeygen_hivestyle_no_metafields",
    "cow_v6_simplekeygen_nonhivestyle",
    "cow_v6_simplekeygen_nonhivestyle_overwritetable",
    "mor_avrolog_v6_trips_8i1u",
    "mor_parquetlog_v6_complexkeygen_hivestyle",
    "mor_parquetlog_v6_empty",
    "mor_parquetlog_v6_nonpartitioned",
    "mor_parquetlog_v6_simplekeygen_hivestyle_no_metafields",
    "mor_parquetlog_v6_simplekeygen_nonhivestyle",
    "mor_parquetlog_v6_simplekeygen_nonhivestyle_overwritetable",
]
V6_WITH_COMMITS = [n for n in V6_TABLES if not n.endswith("_empty")]
V6_MOR = [n for n in V6_TABLES if n.startswith("mor_")]
TRIPS = "mor_avrolog_v6_trips_8i1u"
