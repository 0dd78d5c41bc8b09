// The write side of the `hudi` short name: `df.write.format("hudi")` (by path and `saveAsTable`), and Hudi's Spark SQL
// writes on `USING hudi` tables (CREATE TABLE ... AS SELECT, INSERT INTO / INSERT OVERWRITE). The JVM only plans:
// every write is handed, as a DataFrame with its path, options and save mode, to the Python engine's one write
// (`hudi_engine.spark.write`) through a py4j callback the Python driver registers (`hudi_engine.spark.save`), as
// pyspark's `foreachBatch` does. A Spark process without a Python driver (the Thrift server) has no callback, and
// its writes are refused.
package hudiengine.spark

import java.util.Locale

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, Encoders, SaveMode}
import org.apache.spark.sql.catalyst.catalog.{CatalogTable, CatalogTableType, CatalogUtils}
import org.apache.spark.sql.catalyst.analysis.EliminateSubqueryAliases
import org.apache.spark.sql.catalyst.expressions.{Alias, And, Attribute, AttributeReference, CaseWhen, Cast,
  EqualTo, ExprId, Expression, IsNotNull, Literal, NamedExpression, Not}
import org.apache.spark.sql.catalyst.plans.LeftOuter
import org.apache.spark.sql.catalyst.plans.logical.{Assignment, DeleteAction, DeleteFromTable, Filter, InsertAction,
  InsertIntoStatement, Join, JoinHint, LocalRelation, LogicalPlan, MergeIntoTable, Project, UpdateAction, UpdateTable}
import org.apache.spark.sql.types.{BooleanType, StringType, StructField, StructType}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.util.{CaseInsensitiveMap, CharVarcharUtils}
import org.apache.spark.sql.classic.{Dataset, SparkSession}
import org.apache.spark.sql.execution.command.{AlterTableAddColumnsCommand, LeafRunnableCommand,
  TruncateTableCommand}
import org.apache.spark.sql.execution.datasources.{CreateTable, LogicalRelation}
import org.apache.spark.sql.Row

/** The Python driver's write, implemented in Python (`hudi_engine.spark.save.PythonWriter`). Returns JSON:
 *  `{"result": <the WriteResult, or null when nothing was written>}` or `{"error": <message>}`. */
trait PythonWriter {
  def write(data: DataFrame, path: String, options: java.util.Map[String, String], mode: String,
            target: String): String
}

/** Where the JVM finds the Python driver's writer. */
object Writes {
  @volatile private var writer: PythonWriter = null
  private val json = new com.fasterxml.jackson.databind.ObjectMapper()

  /** Called by the Python driver (`register_data_source`). */
  def register(w: PythonWriter): Unit = writer = w

  @volatile private var last: String = "null"

  def registered(): Boolean = writer != null

  /** The last write's `WriteResult` as JSON ("null": none, or nothing written), for `last_write_result()`. */
  def lastResult(): String = last

  /** Writes `data` to the Hudi table at `path`, or throws the engine's refusal as one clear error. `target` names
   *  the table in errors ("hudi table at <path>", "catalog table db.t"). */
  def write(target: String, data: DataFrame, path: String, options: Map[String, String], mode: SaveMode): Unit = {
    val w = writer
    if (w == null) {
      throw new IllegalArgumentException(
        s"$target: writing a Hudi table needs the Python engine in the Spark driver (a pyspark session that ran " +
          "hudi_engine.spark.register_data_source); this Spark process has none (e.g. the Thrift server), so it " +
          "only reads Hudi tables")
    }
    val answer = json.readTree(w.write(data, path, options.asJava, mode.name.toLowerCase(Locale.ROOT), target))
    if (answer.has("error")) throw new IllegalArgumentException(answer.get("error").asText())
    last = json.writeValueAsString(answer.get("result"))
  }

  /** The schema of the relation a save returns to Spark, which only builds its cache refresh from it (Spark's
   *  SaveIntoDataSourceCommand): the written rows' columns behind the meta columns, not planned, because planning
   *  the table (the Python planner's listing of every file slice) would cost a read after every save. */
  def savedSchema(data: DataFrame): StructType = StructType(
    HudiWriteNames.MetaColumns.map(StructField(_, StringType)) ++
      data.schema.fields.filterNot(f => HudiWriteNames.MetaColumns.contains(f.name)))

  /** Options as the caller spelled their keys (Spark lower-cases a case-insensitive map's keys when iterated). */
  def spelled(options: Map[String, String]): Map[String, String] = options match {
    case c: CaseInsensitiveMap[String @unchecked] => c.originalMap
    case m => m
  }
}

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

  def location(table: CatalogTable): String =
    HudiRelation.pathComment(table.schema)
      .orElse(table.storage.locationUri.map(CatalogUtils.URIToString))
      .getOrElse(throw new IllegalArgumentException(s"catalog table ${table.identifier.unquotedString}: no location"))
}

/** `CREATE TABLE t USING hudi [PARTITIONED BY (...)] [LOCATION ...] [TBLPROPERTIES (...)] AS SELECT ...`: the rows
 *  written by the engine (its checks, one commit), then the catalog entry, whose schema is the table's (meta
 *  columns first, the location in `_hoodie_commit_time`'s comment, as `create_catalog_table` writes it). */
case class CreateHudiTableAsSelect(desc: CatalogTable, mode: SaveMode, query: LogicalPlan)
    extends LeafRunnableCommand {
  override def innerChildren: Seq[LogicalPlan] = Seq(query)

  override def run(spark: org.apache.spark.sql.SparkSession): Seq[Row] = {
    val session = spark.asInstanceOf[SparkSession]
    val catalog = session.sessionState.catalog
    val ident = catalog.qualifyIdentifier(desc.identifier)
    if (catalog.tableExists(ident)) {
      val existing = catalog.getTableMetadata(ident)
      mode match {
        case SaveMode.Ignore => return Nil
        // `saveAsTable` of an existing table in mode append (or overwrite, where Spark did not drop it first).
        case SaveMode.Append | SaveMode.Overwrite if HudiWriteNames.isHudi(existing.provider) =>
          Writes.write(s"catalog table ${ident.unquotedString}", HudiWriteNames.frame(session, query),
            SqlTable.location(existing), SqlTable.options(existing, Nil, "save_as_table", session) ++
              Writes.spelled(desc.storage.properties).filter { case (k, _) => !k.equalsIgnoreCase("path") }, mode)
          catalog.refreshTable(ident)
          return Nil
        case _ => throw new IllegalArgumentException(
          s"CREATE TABLE ${ident.unquotedString} AS SELECT: the table already exists in the catalog" +
            s" (${existing.provider.getOrElse("no provider")}); drop it first, or INSERT INTO / INSERT OVERWRITE it")
      }
    }
    val location = desc.storage.locationUri.getOrElse(catalog.defaultTablePath(ident))
    val path = CatalogUtils.URIToString(location)
    val table = desc.copy(identifier = ident)
    Writes.write(s"catalog table ${ident.unquotedString}", HudiWriteNames.frame(session, query), path,
      SqlTable.options(table, desc.partitionColumnNames,
        if (mode == SaveMode.Overwrite) "replace_table_as_select" else "create_table_as_select", session),
      SaveMode.ErrorIfExists)
    SqlTable.createEntry(session, table, location)
    Nil
  }
}

/** `CREATE TABLE t [(columns)] USING hudi [PARTITIONED BY (...)] [LOCATION ...] [TBLPROPERTIES (...)]`, as Hudi's
 *  CreateHoodieTableCommand: an empty Hudi table (its hoodie.properties, the columns as its create schema) made by
 *  the Python side, then the catalog entry. On a location that already holds a Hudi table, nothing is written: the
 *  entry is made from that table's schema, and columns or TBLPROPERTIES that contradict its hoodie.properties are
 *  refused (on the Python side, which reads it). */
case class CreateHudiTable(desc: CatalogTable, ignoreIfExists: Boolean) extends LeafRunnableCommand {
  override def run(spark: org.apache.spark.sql.SparkSession): Seq[Row] = {
    val session = spark.asInstanceOf[SparkSession]
    val catalog = session.sessionState.catalog
    val ident = catalog.qualifyIdentifier(desc.identifier)
    if (catalog.tableExists(ident)) {
      if (ignoreIfExists) return Nil
      throw new IllegalArgumentException(s"CREATE TABLE ${ident.unquotedString}: the table already exists in the " +
        "catalog; use CREATE TABLE IF NOT EXISTS, or drop it first")
    }
    // `USING hudi OPTIONS (path '...')` names the location as LOCATION does.
    val location = desc.storage.locationUri
      .orElse(desc.storage.properties.collectFirst { case (k, v) if k.equalsIgnoreCase("path") =>
        CatalogUtils.stringToURI(v) })
      .getOrElse(catalog.defaultTablePath(ident))
    val table = desc.copy(identifier = ident)
    // The columns travel as an empty DataFrame of their schema: the Python side takes them as the create schema.
    // Meta columns listed among them are the engine's, as in Hudi's command.
    val given = desc.schema.fields.toIndexedSeq.filterNot(f => HudiWriteNames.MetaColumns.contains(f.name))
    val columns = HudiWriteNames.frame(session, LocalRelation(given.map(f =>
      AttributeReference(f.name, f.dataType, f.nullable, f.metadata)())))
    Writes.write(s"catalog table ${ident.unquotedString}", columns, CatalogUtils.URIToString(location),
      SqlTable.options(table, desc.partitionColumnNames, "create_table", session), SaveMode.Append)
    SqlTable.createEntry(session, table, location)
    Nil
  }
}

/** `TRUNCATE TABLE t` on a `USING hudi` table, as Hudi's TruncateHoodieTableCommand: the Python side deletes the
 *  table's folder and makes the table again, empty, from its hoodie.properties (no instant, the timeline gone).
 *  `TRUNCATE TABLE t PARTITION (...)` is refused (the engine has no delete_partition operation). */
case class TruncateHudiTable(table: CatalogTable, partitionSpec: Option[Map[String, String]])
    extends LeafRunnableCommand {
  override def run(spark: org.apache.spark.sql.SparkSession): Seq[Row] = {
    val session = spark.asInstanceOf[SparkSession]
    val name = table.identifier.unquotedString
    partitionSpec.foreach { spec =>
      throw new IllegalArgumentException(s"TRUNCATE TABLE $name PARTITION (${spec.map { case (k, v) => s"$k = '$v'" }
        .mkString(", ")}): truncating one partition (Hudi's delete_partition) is not supported here; run DELETE FROM " +
        s"$name WHERE <the partition's columns> to delete its rows")
    }
    val path = SqlTable.location(table)
    val relation = new HudiRelation(session.sqlContext, Map("path" -> path), None)
    val data = relation.schema.fields.toIndexedSeq.filterNot(f => HudiWriteNames.MetaColumns.contains(f.name))
    val empty = HudiWriteNames.frame(session, LocalRelation(data.map(f =>
      AttributeReference(f.name, f.dataType, f.nullable, f.metadata)())))
    Writes.write(s"catalog table $name", empty, path, SqlTable.options(table, Nil, "truncate", session),
      SaveMode.Overwrite)
    session.sessionState.catalog.refreshTable(table.identifier)
    Nil
  }
}

/** `ALTER TABLE t ADD COLUMNS (...)` on a `USING hudi` table, as Hudi's AlterHoodieTableAddColumnsCommand: one
 *  instant of no rows whose commit metadata carries the table's schema with the new (nullable) columns last, or
 *  before the partition columns that end it (save.py), operation ALTER_SCHEMA; readers give the new columns as null in the rows written before. Then the catalog
 *  entry's schema, as Spark's own command alters it. A column the table has already is refused. */
case class AddColumnsToHudiTable(table: CatalogTable, columns: Seq[StructField]) extends LeafRunnableCommand {
  override def run(spark: org.apache.spark.sql.SparkSession): Seq[Row] = {
    val session = spark.asInstanceOf[SparkSession]
    val name = table.identifier.unquotedString
    val path = SqlTable.location(table)
    val relation = new HudiRelation(session.sqlContext, Map("path" -> path), None)
    val data = relation.schema.fields.toIndexedSeq.filterNot(f => HudiWriteNames.MetaColumns.contains(f.name))
    val resolver = session.sessionState.conf.resolver
    val clash = relation.schema.fields.filter(f => columns.exists(c => resolver(f.name, c.name)))
    if (clash.nonEmpty) {
      throw new IllegalArgumentException(s"ALTER TABLE $name ADD COLUMNS: the table has ${clash.map(_.name)
        .mkString(", ")} already; add columns it does not have")
    }
    // CHAR/VARCHAR are strings in the data (Spark keeps the declared type in the entry's metadata), and a DEFAULT
    // is the catalog's business: the table's schema gets the plain nullable columns.
    val added = CharVarcharUtils.replaceCharVarcharWithStringInSchema(StructType(columns))
    val widened = data ++ added.fields.map(f => StructField(f.name, f.dataType, nullable = true))
    val empty = HudiWriteNames.frame(session, LocalRelation(widened.map(f =>
      AttributeReference(f.name, f.dataType, f.nullable, f.metadata)())))
    Writes.write(s"catalog table $name", empty, path, SqlTable.options(table, Nil, "alter_add_columns", session),
      SaveMode.Append)
    // The entry's columns in the table's new order (the Python side put the new columns before partition columns
    // that end the schema, as Hudi does), each keeping what the entry says of it (comments, CHAR/VARCHAR, DEFAULT).
    val order = new HudiRelation(session.sqlContext, Map("path" -> path), None).schema.fieldNames.zipWithIndex.toMap
    val catalog = session.sessionState.catalog
    catalog.alterTableDataSchema(table.identifier,
      StructType((table.dataSchema ++ added.fields).sortBy(f => order.getOrElse(f.name, Int.MaxValue))))
    catalog.refreshTable(table.identifier)
    Nil
  }
}

/** `INSERT INTO t [PARTITION (...)] ...` and `INSERT OVERWRITE t [PARTITION (...)] ...` on a `USING hudi` table: the
 *  query's columns are the table's data columns (the meta columns are the engine's), by position or by name, with
 *  static partition values added as columns. Hudi's Spark SQL operations: INSERT INTO runs
 *  `hoodie.spark.sql.insert.into.operation` (default `insert`), INSERT OVERWRITE with static partition values
 *  `insert_overwrite` (those partitions), without `insert_overwrite_table`. */
case class InsertIntoHudiTable(table: CatalogTable, target: Seq[Attribute], partitionSpec: Map[String, Option[String]],
    userColumns: Seq[String], byName: Boolean, query: LogicalPlan, overwrite: Boolean) extends LeafRunnableCommand {
  override def innerChildren: Seq[LogicalPlan] = Seq(query)

  private def name: String = table.identifier.unquotedString

  private def refuse(reason: String): Nothing =
    throw new IllegalArgumentException(s"${if (overwrite) "INSERT OVERWRITE" else "INSERT INTO"} $name: $reason")

  /** The rows to write: one column per data column of the table, cast to its type. */
  def rows(session: SparkSession): LogicalPlan = {
    val resolver = session.sessionState.conf.resolver
    val data = target.filterNot(a => HudiWriteNames.MetaColumns.contains(a.name))
    def column(n: String): Attribute =
      data.find(a => resolver(a.name, n)).getOrElse(refuse(s"no column $n among ${data.map(_.name).mkString(", ")}"))
    val static = partitionSpec.collect { case (k, Some(v)) => column(k) -> v }
    val fromQuery = data.filterNot(a => static.keySet.exists(_.exprId == a.exprId))
    val given: Seq[(Attribute, NamedExpression)] =
      if (userColumns.nonEmpty) {
        if (userColumns.size != query.output.size) {
          refuse(s"${userColumns.size} columns named, the query gives ${query.output.size}")
        }
        userColumns.map(column).zip(query.output)
      } else if (byName) {
        query.output.map(q => column(q.name) -> q)
      } else {
        if (query.output.size != fromQuery.size) {
          refuse(s"the query gives ${query.output.size} columns, the table takes ${fromQuery.size}: " +
            s"${fromQuery.map(_.name).mkString(", ")} (the Hudi meta columns are written by the engine)")
        }
        fromQuery.zip(query.output)
      }
    // A nullable column an explicit column list leaves out is NULL, as Spark fills it
    // (spark.sql.defaultColumn.useNullsForMissingDefaultValues) and Hudi's INSERT takes it; one with a DEFAULT (the
    // catalog's business, not filled here) or not nullable must be named.
    def hasDefault(a: Attribute): Boolean =
      table.schema.find(f => resolver(f.name, a.name)).exists(_.metadata.contains("CURRENT_DEFAULT"))
    val missing = fromQuery.filterNot(a => given.exists(_._1.exprId == a.exprId))
      .filterNot(a => userColumns.nonEmpty && a.nullable && !hasDefault(a))
    if (missing.nonEmpty) refuse(s"no value for ${missing.map(_.name).mkString(", ")}")
    val zone = Some(session.sessionState.conf.sessionLocalTimeZone)
    val columns = data.map { a =>
      val value = static.get(a).map(v => Literal(v): Expression)
        .orElse(given.find(_._1.exprId == a.exprId).map(_._2))
        .getOrElse(Literal(null, a.dataType))
      Alias(if (value.dataType == a.dataType) value else Cast(value, a.dataType, zone), a.name)()
    }
    Project(columns, query)
  }

  override def run(spark: org.apache.spark.sql.SparkSession): Seq[Row] = {
    val session = spark.asInstanceOf[SparkSession]
    val statement =
      if (!overwrite) "insert_into"
      else if (partitionSpec.values.exists(_.isDefined)) "insert_overwrite_partition"
      else "insert_overwrite"
    Writes.write(s"catalog table $name", HudiWriteNames.frame(session, rows(session)), SqlTable.location(table),
      SqlTable.options(table, Nil, statement, session), if (overwrite) SaveMode.Overwrite else SaveMode.Append)
    session.sessionState.catalog.refreshTable(table.identifier)
    Nil
  }
}

/** `UPDATE t SET ... [WHERE ...]` and `DELETE FROM t [WHERE ...]` on a `USING hudi` table: the changed rows are
 *  computed here by Spark (the table as of its latest commit, filtered, the assignments applied) and written as one
 *  `upsert` or `delete`. The Python side refuses an UPDATE of the record key or a partition column (it knows the
 *  table's hoodie.properties) before anything is written. */
case class UpdateOrDeleteHudiTable(table: CatalogTable, relation: LogicalRelation, assignments: Seq[Assignment],
    condition: Option[Expression], delete: Boolean) extends LeafRunnableCommand {
  override def innerChildren: Seq[LogicalPlan] = Seq(relation)

  override def run(spark: org.apache.spark.sql.SparkSession): Seq[Row] = {
    val session = spark.asInstanceOf[SparkSession]
    val name = table.identifier.unquotedString
    val matched = condition.fold[LogicalPlan](relation)(c => Filter(c, relation))
    val assigned = assignments.map { a =>
      a.key match {
        case k: Attribute => k -> a.value
        case other => throw new IllegalArgumentException(
          s"UPDATE $name: SET ${other.sql}: only whole columns can be assigned")
      }
    }
    val zone = Some(session.sessionState.conf.sessionLocalTimeZone)
    val rows = if (delete) matched else Project(relation.output.map { col =>
      assigned.find(_._1.exprId == col.exprId).map { case (_, v) =>
        Alias(if (v.dataType == col.dataType) v else Cast(v, col.dataType, zone), col.name)()
      }.getOrElse(col)
    }, matched)
    val statement = if (delete) "delete" else "update"
    val options = SqlTable.options(table, Nil, statement, session) +
      (HudiWriteNames.AssignedColumns -> assigned.map(_._1.name).mkString(","))
    Writes.write(s"catalog table $name", HudiWriteNames.frame(session, rows), SqlTable.location(table), options,
      SaveMode.Append)
    session.sessionState.catalog.refreshTable(table.identifier)
    Nil
  }
}

/** `MERGE INTO t USING s ON <record key equalities> WHEN MATCHED [AND c] THEN UPDATE SET ... | UPDATE SET * | DELETE
 *  WHEN NOT MATCHED [AND c] THEN INSERT ... | INSERT *`, as Hudi's MergeIntoHoodieTableCommand: the changed rows
 *  computed here by Spark (the source left outer joined to the table, each row taking the first clause, in clause
 *  order, whose condition holds) and written as one `upsert`; rows a delete clause chose carry
 *  `_hoodie_is_deleted = true` and delete their key in that upsert (Hudi's ExpressionPayload). Delete clauses only:
 *  one `delete`. `*` means the table's data columns: the meta columns are the engine's (the rule hides them from
 *  Spark's expansion). `WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *` with no conditions is the
 *  upsert of the source rows: no join, the engine's upsert finds the stored records by key.
 *  Refused before anything is written: an ON clause that is not equalities on the record key (checked against
 *  hoodie.properties on the Python side), SET of the record key or a partition column, WHEN NOT MATCHED BY SOURCE. */
case class MergeIntoHudiTable(table: CatalogTable, merge: MergeIntoTable) extends LeafRunnableCommand {
  override def innerChildren: Seq[LogicalPlan] = Seq(merge.targetTable, merge.sourceTable)

  private def name: String = table.identifier.unquotedString

  private def refuse(part: String, reason: String): Nothing =
    throw new IllegalArgumentException(s"MERGE INTO $name: $part: $reason")

  /** A clause as the rows see it: when it decides a row, the value of each target column it sets, whether it
   *  deletes the row. */
  private case class Clause(when: Expression, values: Map[ExprId, Expression], deletes: Boolean)

  override def run(spark: org.apache.spark.sql.SparkSession): Seq[Row] = {
    val session = spark.asInstanceOf[SparkSession]
    val target = merge.targetTable
    val targetSet = target.outputSet
    if (merge.notMatchedBySourceActions.nonEmpty) {
      refuse("WHEN NOT MATCHED BY SOURCE", "Hudi's MERGE INTO does not take it (use DELETE FROM with a subquery)")
    }
    def conjuncts(e: Expression): Seq[Expression] = e match {
      case And(a, b) => conjuncts(a) ++ conjuncts(b)
      case other => Seq(other)
    }
    val keyPairs = conjuncts(merge.mergeCondition).map {
      case EqualTo(a: Attribute, b) if targetSet.contains(a) && !b.references.exists(targetSet.contains) => a -> b
      case EqualTo(b, a: Attribute) if targetSet.contains(a) && !b.references.exists(targetSet.contains) => a -> b
      case other => refuse(s"ON ${other.sql}", "Hudi matches rows by their record key: the ON clause must be " +
        "equalities between the table's record key columns and source expressions")
    }
    val actions = merge.matchedActions ++ merge.notMatchedActions
    actions.foreach {
      case _: UpdateAction | _: InsertAction | _: DeleteAction =>
      case other => refuse(other.sql, "not a clause Hudi's MERGE INTO takes")
    }
    val deletesOnly = actions.forall(_.isInstanceOf[DeleteAction])
    // Explicit SET of a column other than a key the ON clause equates with its own value (SET * sets every column
    // from the source, as Hudi's upsert of the source row would; the key is the value it was matched by).
    val assigned = merge.matchedActions.collect { case u: UpdateAction if !u.fromStar => u.assignments }.flatten.collect {
      case Assignment(k: Attribute, v) if !keyPairs.exists { case (a, b) => a.exprId == k.exprId && b.semanticEquals(v) } =>
        k.name
    }.distinct

    val resolver = session.sessionState.conf.resolver
    // A table that has a `_hoodie_is_deleted` column keeps it: a delete clause sets it; otherwise the rows carry it
    // as an extra column the engine does not write.
    val ownMarker = target.output.find(a => resolver(a.name, HudiWriteNames.IsDeleted))
    def values(assignments: Seq[Assignment]): Map[ExprId, Expression] =
      assignments.collect { case Assignment(k: Attribute, v) => k.exprId -> v }.toMap
    val zone = Some(session.sessionState.conf.sessionLocalTimeZone)
    def typed(v: Expression, c: Attribute): Expression = if (v.dataType == c.dataType) v else Cast(v, c.dataType, zone)

    val rows = upsertOfSource(keyPairs).map { insert =>
      Project(target.output.map(c => Alias(typed(insert(c.exprId), c), c.name)()), merge.sourceTable)
    }.getOrElse {
      val matchedFlag = AttributeReference("__hudi_matched", BooleanType)()
      val flagged = Project(target.output :+ Alias(Literal(true), "__hudi_matched")(exprId = matchedFlag.exprId), target)
      val joined = Join(merge.sourceTable, flagged, LeftOuter, Some(merge.mergeCondition), JoinHint.NONE)
      val matched = IsNotNull(matchedFlag)
      val clauses: Seq[Clause] =
        merge.matchedActions.map { a =>
          val when = And(matched, a.condition.getOrElse(Literal.TrueLiteral))
          a match {
            case u: UpdateAction => Clause(when, values(u.assignments), deletes = false)
            case _ => Clause(when, ownMarker.map(m => m.exprId -> (Literal(true): Expression)).toMap, deletes = true)
          }
        } ++ merge.notMatchedActions.map { a =>
          val when = And(Not(matched), a.condition.getOrElse(Literal.TrueLiteral))
          a match {
            case i: InsertAction =>
              val given = values(i.assignments)
              Clause(when, target.output.map(c => c.exprId -> given.getOrElse(c.exprId, Literal(null, c.dataType))).toMap,
                deletes = false)
            case _ => refuse(a.sql, "not a clause Hudi's MERGE INTO takes")
          }
        }
      // The first clause whose condition holds decides the row; none: the row is left out.
      val chosen = CaseWhen(clauses.zipWithIndex.map { case (c, i) => c.when -> Literal(i) }, None)
      val columns = target.output.map { c =>
        Alias(CaseWhen(clauses.map(k => k.when -> typed(k.values.getOrElse(c.exprId, c), c)), None), c.name)()
      }
      val marker =
        if (deletesOnly || ownMarker.isDefined || !clauses.exists(_.deletes)) Nil
        else Seq(Alias(CaseWhen(clauses.map(k => k.when -> Literal(k.deletes)), None), HudiWriteNames.IsDeleted)())
      Project(columns ++ marker, Filter(IsNotNull(chosen), joined))
    }
    val statement = if (deletesOnly) "merge_delete" else "merge"
    val options = SqlTable.options(table, Nil, statement, session) +
      (HudiWriteNames.AssignedColumns -> assigned.mkString(",")) +
      (HudiWriteNames.MergeKeys -> keyPairs.map(_._1.name).distinct.mkString(",")) ++
      (if (rows.output.size > target.output.size) Map(HudiWriteNames.DeleteMarker -> "true") else Map.empty)
    Writes.write(s"catalog table $name", HudiWriteNames.frame(session, rows), SqlTable.location(table), options,
      SaveMode.Append)
    session.sessionState.catalog.refreshTable(table.identifier)
    Nil
  }

  /** `WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *` (no conditions, the key set to the value the
   *  ON clause matched it by): every source row is written as it is, an update where its key is stored and an
   *  insert where not, which is what the engine's upsert does by key. Then the source's value of each target
   *  column; otherwise None. */
  private def upsertOfSource(keyPairs: Seq[(Attribute, Expression)]): Option[ExprId => Expression] =
    (merge.matchedActions, merge.notMatchedActions) match {
      case (Seq(u: UpdateAction), Seq(i: InsertAction)) if u.condition.isEmpty && i.condition.isEmpty && u.fromStar =>
        val update = u.assignments.collect { case Assignment(k: Attribute, v) => k.exprId -> v }.toMap
        val insert = i.assignments.collect { case Assignment(k: Attribute, v) => k.exprId -> v }.toMap
        val target = merge.targetTable.output
        val same = target.forall(c => (update.get(c.exprId), insert.get(c.exprId)) match {
          case (Some(a), Some(b)) => a.semanticEquals(b)
          case _ => false
        })
        val keysKept = keyPairs.forall { case (k, v) => insert.get(k.exprId).exists(_.semanticEquals(v)) }
        if (same && keysKept) Some(insert) else None
      case _ => None
    }
}

/** The resolution rule that plans Hudi's SQL writes (before Spark's own checks, which know nothing of the meta
 *  columns, and before Spark's CTAS, which would lose TBLPROPERTIES and PARTITIONED BY on the way to the source). */
case class HudiWriteRule(session: org.apache.spark.sql.SparkSession) extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan = plan match {
    case CreateTable(desc, mode, Some(query)) if HudiWriteNames.isHudi(desc.provider) && query.resolved =>
      CreateHudiTableAsSelect(desc, mode, query)
    // `create_catalog_table`'s DDL (the location in a column comment) names a table that exists: Spark's own
    // command makes that entry.
    case CreateTable(desc, mode, None) if HudiWriteNames.isHudi(desc.provider) &&
        HudiRelation.pathComment(desc.schema).isEmpty =>
      CreateHudiTable(desc, ignoreIfExists = mode == SaveMode.Ignore)
    case TruncateTableCommand(ident, spec) => HudiWriteRule.hudiCatalogTable(session, ident)
      .fold[LogicalPlan](plan)(t => TruncateHudiTable(t, spec))
    case AlterTableAddColumnsCommand(ident, columns) => HudiWriteRule.hudiCatalogTable(session, ident)
      .fold[LogicalPlan](plan)(t => AddColumnsToHudiTable(t, columns))
    case i: InsertIntoStatement if i.query.resolved => i.table match {
      case l: LogicalRelation if l.relation.isInstanceOf[HudiRelation] && l.catalogTable.isDefined =>
        InsertIntoHudiTable(l.catalogTable.get, l.output, i.partitionSpec, i.userSpecifiedCols, i.byName, i.query,
          i.overwrite)
      case _ => i
    }
    case u: UpdateTable if u.resolved => HudiWriteRule.hudiTable(u.table).fold[LogicalPlan](u) { l =>
      UpdateOrDeleteHudiTable(l.catalogTable.get, l, u.assignments, u.condition, delete = false)
    }
    case d: DeleteFromTable if d.resolved => HudiWriteRule.hudiTable(d.table).fold[LogicalPlan](d) { l =>
      val everything = d.condition == Literal.TrueLiteral
      UpdateOrDeleteHudiTable(l.catalogTable.get, l, Nil, if (everything) None else Some(d.condition), delete = true)
    }
    case m: MergeIntoTable if m.targetTable.resolved && m.sourceTable.resolved &&
        HudiWriteRule.hudiTable(m.targetTable).isDefined =>
      if (m.targetTable.output.exists(a => HudiWriteNames.MetaColumns.contains(a.name))) {
        // Spark expands `UPDATE SET *` / `INSERT *` over the target's output: hide the meta columns from it.
        m.copy(targetTable = m.targetTable.transformUp {
          case l: LogicalRelation if l.relation.isInstanceOf[HudiRelation] =>
            Project(l.output.filterNot(a => HudiWriteNames.MetaColumns.contains(a.name)), l)
        })
      } else if (m.resolved) {
        MergeIntoHudiTable(HudiWriteRule.hudiTable(m.targetTable).get.catalogTable.get, m)
      } else m
    case _ => plan
  }
}

object HudiWriteRule {
  /** The `USING hudi` catalog entry of a v1 command's table name, if that is what it names. */
  def hudiCatalogTable(session: org.apache.spark.sql.SparkSession,
      ident: org.apache.spark.sql.catalyst.TableIdentifier): Option[CatalogTable] = {
    val catalog = session.asInstanceOf[SparkSession].sessionState.catalog
    if (!catalog.tableExists(ident)) None
    else Some(catalog.getTableMetadata(ident)).filter(t => HudiWriteNames.isHudi(t.provider))
  }

  /** The `USING hudi` catalog table a DML statement names, if that is what it names. */
  def hudiTable(plan: LogicalPlan): Option[LogicalRelation] = EliminateSubqueryAliases(plan) match {
    case Project(_, l: LogicalRelation) if l.relation.isInstanceOf[HudiRelation] && l.catalogTable.isDefined => Some(l)
    case l: LogicalRelation if l.relation.isInstanceOf[HudiRelation] && l.catalogTable.isDefined => Some(l)
    case _ => None
  }
}
