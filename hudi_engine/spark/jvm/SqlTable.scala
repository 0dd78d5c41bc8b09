// What a SQL write hands the Python side besides the rows: the option names, a catalog table's properties,
// partition columns and name, and the catalog entry the engine's table gets.
package hudiengine.spark

import java.util.Locale

import org.apache.spark.sql.{DataFrame, Encoders}
import org.apache.spark.sql.catalyst.catalog.{CatalogTable, CatalogTableType, CatalogUtils}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.classic.{Dataset, SparkSession}
import org.apache.spark.sql.Row

object HudiWriteNames {
  val MetaColumns: Seq[String] =
    Seq("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
      "_hoodie_file_name")
  // Handed to the Python side, which maps a catalog table's TBLPROPERTIES and PARTITIONED BY to Hudi's write options
  // (hudi_engine.spark.save.sql_write_options).
  val TableProperties = "hudi_engine.sql.table_properties."
  val PartitionColumns = "hudi_engine.sql.partition_columns"
  val TableName = "hudi_engine.sql.table_name"
  val Database = "hudi_engine.sql.database"
  val Statement = "hudi_engine.sql.statement"
  val AssignedColumns = "hudi_engine.sql.assigned_columns"
  val MergeKeys = "hudi_engine.sql.merge_keys"
  // The rows' `_hoodie_is_deleted` column only flags the keys a MERGE's delete clauses delete (Hudi's
  // ExpressionPayload): the table has no such column, and the engine does not add one.
  val DeleteMarker = "hudi_engine.sql.delete_marker"
  // ALTER TABLE RENAME / DROP / ALTER COLUMN TYPE: the change, as JSON (AlterColumns.scala)
  val AlterChange = "hudi_engine.sql.alter_change"
  val AddPositions = "hudi_engine.sql.add_positions"
  val IsDeleted = "_hoodie_is_deleted"

  /** A DataFrame of an analyzed plan (Spark's `Dataset.ofRows` is internal to Spark). */
  def frame(session: SparkSession, plan: LogicalPlan): DataFrame =
    new Dataset[Row](session, plan, Encoders.row(plan.schema))

  def isHudi(provider: Option[String]): Boolean = provider.exists(_.equalsIgnoreCase(Names.Hudi))
}

/** What a catalog table hands the Python side: its TBLPROPERTIES and OPTIONS, partition columns, name. */
object SqlTable {
  import HudiWriteNames._

  /** Hudi's SQL takes `SET hoodie.*=...` of the session as write options, below the table's own. */
  def options(table: CatalogTable, partitionColumns: Seq[String], statement: String,
      session: SparkSession): Map[String, String] =
    session.conf.getAll.filter { case (k, _) => k.startsWith("hoodie.") } ++
    Writes.spelled(table.storage.properties).filter { case (k, _) => k.toLowerCase(Locale.ROOT) != "path" } ++
      table.properties.map { case (k, v) => (TableProperties + k) -> v } ++
      Map(PartitionColumns -> partitionColumns.mkString(","), TableName -> table.identifier.table,
        Database -> table.identifier.database.getOrElse("default"), Statement -> statement)

  /** The catalog entry of a Hudi table the engine made at `location` (CTAS, saveAsTable, CREATE TABLE): its schema
   *  is the table's (meta columns first, the location in `_hoodie_commit_time`'s comment, as
   *  `create_catalog_table` writes it). */
  def createEntry(session: SparkSession, table: CatalogTable, location: java.net.URI): Unit = {
    val schema = new HudiRelation(session.sqlContext, Map("path" -> CatalogUtils.URIToString(location)), None).schema
    // Spark's catalog wants partition columns last; Hudi keeps them where the data has them, and the planner prunes
    // partitions itself, so the entry records none (TBLPROPERTIES and the table's hoodie.properties keep them).
    val entry = table.copy(
      schema = schema,
      partitionColumnNames = Nil,
      provider = Some(Names.Hudi),
      storage = table.storage.copy(locationUri = Some(location)),
      // Always external: `mode("overwrite").saveAsTable` drops the entry before it writes, and dropping a managed
      // entry would delete the table's files (its timeline too) before the engine could replace its rows.
      tableType = CatalogTableType.EXTERNAL)
    session.sessionState.catalog.createTable(entry, ignoreIfExists = false, validateLocation = false)
  }

  /** Whether the table at the catalog entry's location is keyless (its hoodie.properties names no
   *  `hoodie.table.recordkey.fields`: keys generated, docs/keyless.md). A MERGE on it joins the stored rows to carry
   *  their `_hoodie_record_key`, as Hudi's MergeIntoHoodieTableCommand does for a table without a primary key.
   *  Unreadable: false (the Python side's checks, which read the same file, then say what is wrong). */
  def keyless(session: SparkSession, table: CatalogTable): Boolean =
    try {
      val file = new org.apache.hadoop.fs.Path(location(table), ".hoodie/hoodie.properties")
      val in = file.getFileSystem(session.sessionState.newHadoopConf()).open(file)
      val props = new java.util.Properties()
      try props.load(in) finally in.close()
      Option(props.getProperty("hoodie.table.recordkey.fields")).forall(_.trim.isEmpty)
    } catch { case scala.util.control.NonFatal(_) => false }

  def location(table: CatalogTable): String =
    HudiRelation.pathComment(table.schema)
      .orElse(table.storage.locationUri.map(CatalogUtils.URIToString))
      .getOrElse(throw new IllegalArgumentException(s"catalog table ${table.identifier.unquotedString}: no location"))
}
