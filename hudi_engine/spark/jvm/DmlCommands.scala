// Hudi's SQL commands on a table's rows: INSERT INTO / INSERT OVERWRITE, UPDATE, DELETE (MERGE INTO:
// MergeIntoHudiTable.scala).
package hudiengine.spark

import org.apache.spark.sql.SaveMode
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, Cast, Expression, Literal, NamedExpression}
import org.apache.spark.sql.catalyst.plans.logical.{Assignment, Filter, LogicalPlan, Project}
import org.apache.spark.sql.classic.SparkSession
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.execution.datasources.LogicalRelation
import org.apache.spark.sql.Row

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
