// Hudi's SQL commands on a table as a whole: CREATE TABLE (... AS SELECT), TRUNCATE TABLE, ALTER TABLE ADD COLUMNS,
// ALTER TABLE DROP PARTITION, SHOW PARTITIONS.
package hudiengine.spark

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.SaveMode
import org.apache.spark.sql.catalyst.catalog.{CatalogTable, CatalogUtils, ExternalCatalogUtils}
import org.apache.spark.sql.catalyst.expressions.AttributeReference
import org.apache.spark.sql.catalyst.plans.logical.{LocalRelation, LogicalPlan}
import org.apache.spark.sql.types.{StringType, StructField, StructType}
import org.apache.spark.sql.catalyst.util.CharVarcharUtils
import org.apache.spark.sql.classic.SparkSession
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.Row

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
 *  `TRUNCATE TABLE t PARTITION (...)` is Hudi's delete_partition (`DropHudiPartitions`). */
case class TruncateHudiTable(table: CatalogTable, partitionSpec: Option[Map[String, String]])
    extends LeafRunnableCommand {
  override def run(spark: org.apache.spark.sql.SparkSession): Seq[Row] = {
    val session = spark.asInstanceOf[SparkSession]
    val name = table.identifier.unquotedString
    if (partitionSpec.isDefined) {
      return DropHudiPartitions(table, partitionSpec.toSeq, ifExists = false, "TRUNCATE TABLE").run(spark)
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

/** `ALTER TABLE t DROP [IF EXISTS] PARTITION (c = 'v'), ...` (and `TRUNCATE TABLE t PARTITION (...)`) on a
 *  `USING hudi` table, as Hudi's AlterHoodieTableDropPartitionCommand: Hudi's delete_partition, one replacecommit
 *  run by the Python driver's `drop_partition` procedure on the partition paths the specs name. A path is the
 *  table's partition fields in order (hoodie.properties), `c=v` where the table is hive-style, escaped where it
 *  URL-encodes; a field a spec leaves out matches every value (`*`). IF EXISTS: one spec naming no partition does
 *  nothing; among several, a missing one is refused with nothing deleted. */
case class DropHudiPartitions(table: CatalogTable, specs: Seq[Map[String, String]], ifExists: Boolean,
    statement: String) extends LeafRunnableCommand {
  override def run(spark: org.apache.spark.sql.SparkSession): Seq[Row] = {
    val session = spark.asInstanceOf[SparkSession]
    val name = table.identifier.unquotedString
    val path = SqlTable.location(table)
    val props = new java.util.Properties()
    val file = new org.apache.hadoop.fs.Path(path, ".hoodie/hoodie.properties")
    val in = file.getFileSystem(session.sessionState.newHadoopConf()).open(file)
    try props.load(in) finally in.close()
    def flag(key: String) = Option(props.getProperty(key)).exists(_.trim.equalsIgnoreCase("true"))
    val fields = Option(props.getProperty("hoodie.table.partition.fields")).getOrElse("").split(",")
      .map(_.trim.split(":")(0)).filter(_.nonEmpty).toSeq
    val hive = flag("hoodie.datasource.write.hive_style_partitioning")
    val encode = flag("hoodie.datasource.write.partitionpath.urlencode")
    val paths = specs.map { spec =>
      val unknown = spec.keys.filterNot(k => fields.exists(_.equalsIgnoreCase(k)))
      if (fields.isEmpty || unknown.nonEmpty) {
        throw new IllegalArgumentException(s"$statement $name PARTITION (${spec.map { case (k, v) => s"$k = '$v'" }
          .mkString(", ")}): ${if (fields.isEmpty) "the table is not partitioned" else s"${unknown.mkString(", ")} " +
          s"is not a partition field; the table's are ${fields.mkString(", ")}"}")
      }
      fields.map { f =>
        val value = spec.collectFirst { case (k, v) if k.equalsIgnoreCase(f) => v }
          .map(v => if (encode) ExternalCatalogUtils.escapePathName(v) else v).getOrElse("*")
        if (hive) s"$f=$value" else value
      }.mkString("/")
    }
    val output = StructType(Seq(StructField("result", StringType)))
    try Procedures.call(session, "drop_partition", Seq(Some("table") -> path, Some("partition") -> paths.mkString(",")),
      output)
    catch {
      case e: IllegalArgumentException if ifExists && specs.size == 1 && e.getMessage.contains("does not exist") =>
    }
    session.sessionState.catalog.refreshTable(table.identifier)
    Nil
  }
}

/** `ALTER TABLE t ADD COLUMNS (...)` on a `USING hudi` table, as Hudi's AlterHoodieTableAddColumnsCommand: one
 *  instant of no rows whose commit metadata carries the table's schema with the new (nullable) columns last, or
 *  before the partition columns that end it (save.py), operation ALTER_SCHEMA; readers give the new columns as null in the rows written before. Then the catalog
 *  entry's schema, as Spark's own command alters it. A column the table has already is refused. */
case class AddColumnsToHudiTable(table: CatalogTable, columns: Seq[StructField],
    positions: Seq[(String, String)] = Nil) extends LeafRunnableCommand {
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
    // FIRST / AFTER (AlterColumns.scala): (column, AFTER column or "" for FIRST), placed by the Python side.
    val placed = if (positions.isEmpty) Map.empty[String, String] else Map(HudiWriteNames.AddPositions ->
      new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(positions.map { case (c, a) =>
        java.util.Arrays.asList(c, if (a.isEmpty) null else a) }.asJava))
    Writes.write(s"catalog table $name", empty, path,
      SqlTable.options(table, Nil, "alter_add_columns", session) ++ placed, SaveMode.Append)
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

/** `SHOW PARTITIONS t [PARTITION (c = 'v', ...)]` on a `USING hudi` table, as Hudi's ShowHoodieTablePartitionsCommand:
 *  the table's partition paths as stored (`dt=v/hh=w` with hive-style folders, `v/w` without), sorted; none for a
 *  table without partition fields. Spark's own command refuses the table, whose catalog entry keeps no partition
 *  columns. The paths are those the latest snapshot has rows in: a partition whose rows were all deleted is not
 *  listed (Hudi lists its folder). A spec is matched on the fields' values, on either folder style (Hudi parses
 *  `c=v` out of the path, so without hive-style folders it matches none); a field that is not a partition field is
 *  refused by name. */
case class ShowHudiPartitions(table: CatalogTable, spec: Option[Map[String, String]],
    override val output: Seq[org.apache.spark.sql.catalyst.expressions.Attribute]) extends LeafRunnableCommand {
  override def run(spark: org.apache.spark.sql.SparkSession): Seq[Row] = {
    val session = spark.asInstanceOf[SparkSession]
    val name = table.identifier.unquotedString
    val props = new java.util.Properties()
    val file = new org.apache.hadoop.fs.Path(SqlTable.location(table), ".hoodie/hoodie.properties")
    val in = file.getFileSystem(session.sessionState.newHadoopConf()).open(file)
    try props.load(in) finally in.close()
    def flag(key: String) = Option(props.getProperty(key)).exists(_.trim.equalsIgnoreCase("true"))
    val fields = Option(props.getProperty("hoodie.table.partition.fields")).getOrElse("").split(",")
      .map(_.trim.split(":")(0)).filter(_.nonEmpty).toSeq
    val unknown = spec.getOrElse(Map.empty).keys.filterNot(k => fields.exists(_.equalsIgnoreCase(k)))
    if (unknown.nonEmpty) throw new IllegalArgumentException(s"SHOW PARTITIONS $name PARTITION: " +
      s"${unknown.mkString(", ")} is not a partition field; the table's are " +
      s"${if (fields.isEmpty) "none (it is not partitioned)" else fields.mkString(", ")}")
    if (fields.isEmpty) return Nil
    val hive = flag("hoodie.datasource.write.hive_style_partitioning")
    val encode = flag("hoodie.datasource.write.partitionpath.urlencode")
    val paths = session.table(table.identifier.quotedString).select("_hoodie_partition_path").distinct().collect()
      .map(_.getString(0)).toSeq.sorted
    paths.filter { p =>
      val values = fields.zip(p.split("/", -1)).map { case (f, part) =>
        val raw = if (hive) part.stripPrefix(s"$f=") else part
        f -> (if (encode) ExternalCatalogUtils.unescapePathName(raw) else raw)
      }
      spec.getOrElse(Map.empty).forall { case (k, v) =>
        values.exists { case (f, x) => f.equalsIgnoreCase(k) && x == v }
      }
    }.map(Row(_))
  }
}
