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

# ../shared/conformance/v8_v9: tables written by Hudi 1.0 / 1.1 (table versions 8 and 9, timeline layout 2).
V8_V9_TABLES = [
    "cow_v8_complexkeygen_hivestyle",
    "cow_v8_empty",
    "cow_v8_nonpartitioned",
    "cow_v8_simplekeygen_hivestyle_no_metafields",
    "cow_v8_simplekeygen_nonhivestyle",
    "cow_v8_simplekeygen_nonhivestyle_overwritetable",
    "cow_v8_timebasedkeygen_nonhivestyle",
    "cow_v9_lance_nonpartitioned",
    "cow_v9_lance_txns_nonpart",
    "cow_v9_lance_txns_simple",
    "cow_v9_timebasedkeygen_epochmillis",
    "cow_v9_timebasedkeygen_nonhivestyle",
    "cow_v9_timebasedkeygen_unixtimestamp",
    "cow_v9_trips_lance",
    "cow_v9_txns_complex_meta",
    "cow_v9_txns_complex_nometa",
    "cow_v9_txns_nonpart_meta",
    "cow_v9_txns_nonpart_nometa",
    "cow_v9_txns_simple_meta",
    "cow_v9_txns_simple_nometa",
    "cow_v9_txns_simple_overwrite",
    "mor_avrolog_table_all_data_types",
    "mor_avrolog_table_column_projection",
    "mor_avrolog_table_log_compaction",
    "mor_avrolog_table_log_only",
    "mor_avrolog_v8_nonpartitioned_mdt",
    "mor_avrolog_v8_trips_8i1u",
    "mor_avrolog_v8_trips_8i3d",
    "mor_avrolog_v8_trips_8i3u1d",
    "mor_avrolog_v9_lance_nonhivestyle",
    "mor_avrolog_v9_mor_8i4u_commit_time",
    "mor_avrolog_v9_mor_nonpart_3commits",
    "mor_avrolog_v9_nonpartitioned_rollback",
    "mor_avrolog_v9_timebasedkeygen_nonhivestyle",
    "mor_avrolog_v9_trips_lance",
    "mor_avrolog_v9_txns_complex_meta",
    "mor_avrolog_v9_txns_complex_nometa",
    "mor_avrolog_v9_txns_nonpart_meta",
    "mor_avrolog_v9_txns_nonpart_nometa",
    "mor_avrolog_v9_txns_simple_meta",
    "mor_avrolog_v9_txns_simple_nometa",
    "mor_avrolog_v9_txns_simple_overwrite",
]
# Lance base files (hoodie.table.base.file.format=LANCE): this engine refuses them with a clear error.
V8_V9_LANCE = [n for n in V8_V9_TABLES if "lance" in n]
V8_V9_PARQUET = [n for n in V8_V9_TABLES if n not in V8_V9_LANCE]
V8_V9_MOR = [n for n in V8_V9_PARQUET if n.startswith("mor_")]
