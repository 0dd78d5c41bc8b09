// The native component of the `hudi` short name: compiled on the user's machine by pyspark's own Scala compiler
// (hudi_engine/spark/native.py, every .scala file of this folder), never shipped as a binary. This file holds its
// entry points: the data source Spark finds by the short name, and the session extension that adds its rules.
//
// Reads: `spark.read.format("hudi")`, `spark.table(...)` and SQL on a `USING hudi` catalog table resolve to a
// `HudiRelation` (HudiRelation.scala): only the table's location, options and schema, which Spark may cache with
// the catalog entry. Nothing is listed there. `HudiStrategy` (HudiStrategy.scala, a planner strategy) expands the
// relation when a query is planned: it asks the Python engine for the read plan as of the latest completed commit
// (`Planner`, ReadPlan.scala: the `hudi_engine_plan` Python data source, whose schema carries the plan; kept while
// the timeline is unchanged, PlanCache.scala), and plans the base files through Spark's own parquet scan (a
// `HadoopFsRelation` over exactly those files, BaseFileScan.scala: column pruning, filter pushdown into row groups,
// vectorized decoding). Slices with log files are split by record key: their base files go to the same scan but
// for the keys their logs write or delete (`UnloggedKey`), and Python tasks the planner made (MergeTasks.scala:
// Spark's MapInArrow, in `hudi_merge`'s Python environment) merge only those keys (and the slices the plan leaves
// whole). The query's filters (Filters.scala) and projections go above the union and Spark's optimizer pushes them
// into every part. Time travel and `hudi_table_changes` by catalog name: HudiByName.scala.
//
// Writes: the Python driver's write behind a py4j callback (PythonWriter.scala), what a catalog table hands it
// (SqlTable.scala), the SQL commands (DdlCommands.scala, DmlCommands.scala, MergeIntoHudiTable.scala) and the
// analyzer rule that plans them (HudiWriteRule.scala).
//
// Hudi's `CALL` procedures: parsed before Spark's parser and run by the Python driver (Procedures.scala).
package hudiengine.spark

import org.apache.spark.sql.{DataFrame, SaveMode, SparkSessionExtensions, SQLContext}
import org.apache.spark.sql.sources.{BaseRelation, CreatableRelationProvider, DataSourceRegister, RelationProvider,
  SchemaRelationProvider}
import org.apache.spark.sql.types.StructType

/** The `hudi` short name: reads (`HudiRelation`) and `df.write.format("hudi")` (`Writes`, PythonWriter.scala). */
class DefaultSource extends RelationProvider with SchemaRelationProvider with CreatableRelationProvider
    with DataSourceRegister {
  override def shortName(): String = Names.Hudi

  override def createRelation(ctx: SQLContext, parameters: Map[String, String]): BaseRelation =
    new HudiRelation(ctx, parameters, None)

  override def createRelation(ctx: SQLContext, parameters: Map[String, String], schema: StructType): BaseRelation =
    new HudiRelation(ctx, parameters, Some(schema))

  /** `df.write.format("hudi").options(...).mode(...).save(path)`: the engine's write, the save mode as Hudi gives
   *  it meaning (decided on the Python side, `hudi_engine.spark.save`). */
  override def createRelation(ctx: SQLContext, mode: SaveMode, parameters: Map[String, String],
      data: DataFrame): BaseRelation = {
    val path = parameters.getOrElse("path", throw new IllegalArgumentException(
      "hudi: no table path to write to; use save(path), option('path', ...) or saveAsTable(name)"))
    val options = Writes.spelled(parameters).filter { case (k, _) => !k.equalsIgnoreCase("path") }
    Writes.write(s"hudi table at $path", data, path, options, mode)
    new HudiRelation(ctx, Map("path" -> path), Some(Writes.savedSchema(data)))
  }
}

object Names {
  val Hudi = "hudi"
  val PlanSource = "hudi_engine_plan" // Python: hudi_engine.spark.native.HudiPlanSource
  val MergeSource = "hudi_merge" // Python: hudi_engine.spark.datasource.HudiMergeSource
  val PathComment = "hudi.path="
  val CommitTime = "_hoodie_commit_time"
  val RecordKey = "_hoodie_record_key"
  val FileMetadata = "_metadata" // Spark's metadata column of a file scan (file_name: the base file's name)
  val Filters = "hudi_engine.read.filters" // Python: hudi_engine.spark.native.FILTERS
  val SparkOpensFiles = "hudi_engine.read.spark_opens_files" // Python: hudi_engine.spark.native.SPARK_OPENS_FILES
  val TableName = "hudi_engine.read.table_name" // Python: hudi_engine.spark.native.TABLE_NAME
  val AsOfInstant = "as.of.instant" // Python: hudi_engine.config.keys.AS_OF_INSTANT
  val TableChanges = "hudi_table_changes" // Python: hudi_engine.spark.table_changes.FUNCTION_NAME
}

/** `spark.sql.extensions=hudiengine.spark.HudiExtensions`. */
class HudiExtensions extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    extensions.injectPlannerStrategy(_ => HudiStrategy)
    extensions.injectResolutionRule(session => HudiWriteRule(session))
    extensions.injectParser((_, delegate) => new HudiSqlParser(delegate))
    extensions.injectResolutionRule(session => HudiByNameRule(session))
    extensions.injectResolutionRule(session => HudiAlterRule(session))
  }
}
