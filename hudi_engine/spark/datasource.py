"""The `hudi` Spark data source: Hudi tables through `spark.read`, built on PySpark 4's Python data source API.

    register_data_source(spark)
    spark.read.format("hudi").load(path)                                  # latest snapshot (MOR merged)
    spark.read.format("hudi").option("as.of.instant", "20240101120000000").load(path)      # time travel
    spark.read.format("hudi").option("hoodie.datasource.query.type", "read_optimized").load(path)
    (spark.read.format("hudi").option("hoodie.datasource.query.type", "incremental")
          .option("hoodie.datasource.read.begin.instanttime", begin)           # exclusive
          .option("hoodie.datasource.read.end.instanttime", end).load(path))   # inclusive, default latest
    # ... and .option("hoodie.datasource.query.incremental.format", "cdc"): Hudi's CDC query (docs/cdc.md)

Options use Hudi's own names (`as_of_instant` is accepted for `as.of.instant`). Instants are
`yyyyMMddHHmmssSSS`, or `yyyy-MM-dd HH:mm:ss[.SSS]` / `yyyy-MM-dd` (UTC), as Hudi's time travel accepts.
On a Hudi 1.x table (versions 8, 9) begin and end are completion times, as Hudi 1.x takes them (docs/python-api.md).
Option keys are declared in `hudi_engine.config.keys` and parsed by `hudi_engine.read_options.ReadOptions`.

How a read runs. The driver side (`HudiDataSource.reader`, in Spark's planning Python worker) loads the table (kept
there for the next query while its timeline is unchanged: `hudi_engine.spark.table_cache`) and plans the read with
the engine's scan plan (`hudi_engine.scan_plan`): the query fixed to one instant or range, its visibility and window
when the reader is made, the latest file slices once Spark pushed its filters (`pushdown`); every file slice becomes
one Spark input partition (`source_reader.HudiReader`). A CDC query is read by `change_reader.ChangeReader`. For
fewer columns, declare them: `spark.read.format("hudi").schema("rider string, fare double").load(path)` reads only
those; for Spark's own parquet reader on base files (column pruning, vectorized decoding),
`hudi_engine.spark.relation.read_table`, or the native component (`hudi_engine.spark.native`). A catalog table
finds its path in a column comment (`catalog_entry`). `register_data_source` (`registration`) registers the source.
"""
from __future__ import annotations

from pyspark.sql.datasource import DataSource, DataSourceReader
from pyspark.sql.types import StructType

# The read options' keys and parse are the engine's; Spark code has always found them here too.
from hudi_engine.read_options import BEGIN_INSTANT as BEGIN_INSTANT
from hudi_engine.read_options import END_INSTANT as END_INSTANT
from hudi_engine.read_options import QUERY_TYPE as QUERY_TYPE
from hudi_engine.read_options import ReadOptions as ReadOptions
from hudi_engine.read_options import normalize_instant as normalize_instant
from hudi_engine.scan_plan import fix_query
from hudi_engine.spark.catalog_entry import FORMAT, catalog_path, require_path, table_location, with_path_comment
from hudi_engine.spark.change_reader import ChangeReader, change_plan
from hudi_engine.spark.source_reader import HudiReader
from hudi_engine.spark.spark_types import spark_schema
from hudi_engine.spark.table_cache import TABLES
from hudi_engine.table import HudiTable

# The same source under a name of its own: the half of a split read that merges log files (`relation.py`), and the
# merge source of the native `hudi` source (`native.py`), which answers `hudi` when the session has it.
MERGE_FORMAT = "hudi_merge"


class HudiDataSource(DataSource):
    """`spark.read.format("hudi")`; see the module docstring for options."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> StructType:
        """The schema of the query's rows (the scan plan's); `_hoodie_commit_time` carries the path comment, so that
        a catalog table created from it (`CREATE TABLE t USING hudi OPTIONS (path ...)`, whose options later reads
        lose) finds it."""
        opts = HudiTable.parse_read_options(self.options)
        path = require_path(opts.path, None)
        table = TABLES.load(path)
        if opts.cdc:
            return spark_schema(change_plan(table, opts).output_schema)
        schema = fix_query(table, opts).schema
        return with_path_comment(spark_schema(schema), table_location(table, path))

    def reader(self, schema: StructType) -> "DataSourceReader":
        opts = HudiTable.parse_read_options(self.options, catalog_path(schema))
        table = TABLES.load(require_path(opts.path, schema))
        if opts.cdc:
            return ChangeReader(table, opts, schema)
        return HudiReader(table, opts, schema)


class HudiMergeSource(HudiDataSource):
    """`HudiDataSource` as `hudi_merge`."""

    @classmethod
    def name(cls) -> str:
        return MERGE_FORMAT
