// ALTER TABLE RENAME COLUMN / DROP COLUMN / ALTER COLUMN ... TYPE / ALTER COLUMN ... FIRST | AFTER, and ADD COLUMNS with
// FIRST | AFTER, on a `USING hudi` table, as Hudi's AlterTableCommand
// with schema evolution on read: the Python side checks the change and commits it (hudi_engine/column_change.py: an
// ALTER_SCHEMA commit of no files, the internal schema's ids kept), then the catalog entry's columns follow. Spark's
// own analysis refuses RENAME and DROP COLUMN of a v1 table (and any type or position change) before a resolution rule
// of ours would see them, and drops an ADD COLUMNS position without a word, so the parser wraps them (`HudiAlter`) and
// `HudiAlterRule` looks at the table first.
package hudiengine.spark

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{Row, SaveMode}
import org.apache.spark.sql.catalyst.analysis.{FieldName, FieldPosition, UnresolvedFieldPosition, UnresolvedTable}
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.catalyst.plans.logical.{AddColumns, AlterColumns, DropColumns, LeafNode, LocalRelation,
  LogicalPlan, RenameColumn}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.classic.SparkSession
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.connector.catalog.TableChange
import org.apache.spark.sql.types.{ArrayType, DataType, MapType, StructField, StructType}

/** A parsed column change of a table by name, which `HudiAlterRule` looks at before Spark's analysis does. */
case class HudiAlter(parsed: LogicalPlan) extends LeafNode {
  override def output: Seq[Attribute] = Nil
  override lazy val resolved: Boolean = false
}

object HudiAlter {
  /** `plan` wrapped when it renames, drops or changes columns of a table named in the statement; else itself. */
  def wrap(plan: LogicalPlan): LogicalPlan = plan match {
    case RenameColumn(_: UnresolvedTable, _, _) | DropColumns(_: UnresolvedTable, _, _) => HudiAlter(plan)
    case AlterColumns(_: UnresolvedTable, specs, _) if specs.exists(s => s.newDataType.isDefined ||
        s.newPosition.isDefined) => HudiAlter(plan)
    case AddColumns(_: UnresolvedTable, columns) if columns.exists(c => c.position.isDefined || c.path.isDefined) =>
      HudiAlter(plan)
    case _ => plan
  }
}

/** A `HudiAlter` of a `USING hudi` table of the session catalog becomes `AlterHudiColumns`; of any other table it
 *  goes back to Spark as it was parsed. */
case class HudiAlterRule(session: org.apache.spark.sql.SparkSession) extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperatorsUp {
    case HudiAlter(parsed) =>
      val table = parsed match {
        case r: RenameColumn => r.table
        case d: DropColumns => d.table
        case a: AlterColumns => a.table
        case a: AddColumns => a.table
      }
      HudiByNameRule(session).hudiTable(table.asInstanceOf[UnresolvedTable].multipartIdentifier)
        .fold(parsed)(command(_, parsed))
  }

  private def command(t: CatalogTable, parsed: LogicalPlan): LogicalPlan = {
    val name = t.identifier.unquotedString
    // A struct member by its full name (`s.a`), as Hudi's TableChanges name it.
    def column(f: FieldName): String = f.name.mkString(".")
    // A position's AFTER column ("" for FIRST, which the Python side refuses for a top-level column, as Hudi does).
    def after(p: FieldPosition): String = p match {
      case UnresolvedFieldPosition(a: TableChange.After) => a.column()
      case _ => ""
    }
    parsed match {
      // Struct members (`ADD COLUMNS (s.c int [AFTER b], s.d string, x int)`): the statement's columns committed as
      // one change by the Python side's add, numbered in the statement's order (Hudi's ColumnAddChange).
      case AddColumns(_, columns) if columns.exists(_.path.isDefined) =>
        columns.find(_.default.isDefined).foreach { c => throw new IllegalArgumentException(s"ALTER TABLE $name " +
          s"ADD COLUMNS: ${c.name.mkString(".")} has a DEFAULT; add the struct members without one, then set the " +
          "DEFAULT in a statement of its own") }
        // The Python side's add takes a name, a type and a position: a comment or NOT NULL would be lost.
        columns.find(c => c.comment.isDefined || !c.nullable).foreach { c => throw new IllegalArgumentException(
          s"ALTER TABLE $name ADD COLUMNS: ${c.name.mkString(".")} has a COMMENT or NOT NULL, which a statement " +
          "adding struct members does not keep; add it without (new columns are optional, as Hudi adds them), or " +
          "add a top-level column with its comment in a statement without struct members") }
        AlterHudiColumns(t, "add", columns.map(_.name.mkString(".")), "", None,
          columns.map(_.dataType), columns.map(_.position.map(after).getOrElse("")))
      case AddColumns(_, columns) =>
        columns.foreach { c =>
          if (c.default.isDefined) throw new IllegalArgumentException(s"ALTER TABLE $name ADD COLUMNS: ${c.colName} " +
            "has a DEFAULT and a position; add it with its position, then set the DEFAULT in a statement of its own")
        }
        val fields = columns.map { c =>
          val f = StructField(c.colName, c.dataType, c.nullable)
          c.comment.fold(f)(f.withComment)
        }
        AddColumnsToHudiTable(t, fields, columns.flatMap(c => c.position.map(p => c.colName -> after(p))))
      case AlterColumns(_, Seq(spec), _) if spec.newDataType.isEmpty && spec.newNullability.isEmpty &&
          spec.newComment.isEmpty && spec.newPosition.isDefined && spec.newDefaultExpression.isEmpty &&
          !spec.dropDefault =>
        AlterHudiColumns(t, "position", Seq(column(spec.column)), after(spec.newPosition.get), None)
      case RenameColumn(_, c, to) => AlterHudiColumns(t, "rename", Seq(column(c)), to, None)
      case DropColumns(_, cs, ifExists) =>
        val resolver = session.sessionState.conf.resolver
        val named = cs.map(column)
        // A struct member of the entry's schema, found down its structs, arrays' `element` and maps' `value`.
        def within(t: DataType, parts: Seq[String]): Boolean = (t, parts.head) match {
          case (st: StructType, _) => has(st, parts)
          case (a: ArrayType, "element") => parts.size > 1 && within(a.elementType, parts.tail)
          case (m: MapType, "value") => parts.size > 1 && within(m.valueType, parts.tail)
          case _ => false
        }
        def has(schema: StructType, parts: Seq[String]): Boolean = schema.fields.find(f => resolver(f.name, parts.head))
          .exists(f => parts.size == 1 || within(f.dataType, parts.tail))
        val existing = if (ifExists) cs.filter(c => has(t.schema, c.name)).map(column) else named
        if (existing.isEmpty) NoAlter else AlterHudiColumns(t, "drop", existing, "", None)
      case AlterColumns(_, Seq(spec), _) if spec.newNullability.isEmpty && spec.newComment.isEmpty &&
          spec.newPosition.isEmpty && spec.newDefaultExpression.isEmpty && !spec.dropDefault =>
        AlterHudiColumns(t, "type", Seq(column(spec.column)), "", spec.newDataType)
      case _ => throw new IllegalArgumentException(s"ALTER TABLE $name ALTER COLUMN: change one column's type or " +
        "position per statement, alone (its comment, nullability or default in a statement of its own)")
    }
  }
}

/** Nothing to do (DROP COLUMN IF EXISTS of columns the table does not have). */
case object NoAlter extends LeafRunnableCommand {
  override def run(spark: org.apache.spark.sql.SparkSession): Seq[Row] = Nil
}

/** The change committed by the Python side (`hudi_engine.spark.save.alter_columns`), then the catalog entry's
 *  columns: the renamed one renamed, the dropped ones gone, the retyped one with its new type, the others as the
 *  entry has them (comments, the location comment of `_hoodie_commit_time`). */
case class AlterHudiColumns(table: CatalogTable, kind: String, columns: Seq[String], newName: String,
    newType: Option[DataType], newTypes: Seq[DataType] = Nil, afters: Seq[String] = Nil)
    extends LeafRunnableCommand {
  override def run(spark: org.apache.spark.sql.SparkSession): Seq[Row] = {
    val session = spark.asInstanceOf[SparkSession]
    val name = table.identifier.unquotedString
    val path = SqlTable.location(table)
    val change = new java.util.LinkedHashMap[String, Any]()
    change.put("kind", kind)
    change.put("columns", columns.asJava)
    change.put("new_name", newName)  // a rename's new name, a position's AFTER column ("" for FIRST)
    change.put("new_type", newType.map(_.json).orNull)
    change.put("new_types", newTypes.map(_.json).asJava)  // an add's types and AFTER columns, column by column
    change.put("afters", afters.asJava)
    val spec = new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(change)
    Writes.write(s"catalog table $name", HudiWriteNames.frame(session, LocalRelation(Nil)), path,
      SqlTable.options(table, Nil, "alter_columns", session) + (HudiWriteNames.AlterChange -> spec), SaveMode.Append)
    val catalog = session.sessionState.catalog
    val resolver = session.sessionState.conf.resolver
    val entry = catalog.getTableMetadata(table.identifier)
    if (kind == "add" || columns.exists(_.contains("."))) {
      // Struct members changed (or columns added, or dropped beside members): each entry column the statement
      // names takes the table's new type, or goes when the table no longer has it; new columns are added.
      val now = new HudiRelation(session.sqlContext, Map("path" -> path), None).schema
      val tops = columns.map(_.split('.').head).distinct
      val named = (n: String) => tops.exists(resolver(_, n))
      val added = now.fields.toSeq.filter(f => named(f.name) && !entry.schema.fieldNames.exists(resolver(_, f.name)))
      val fields = entry.schema.fields.toSeq.flatMap { f =>
        if (!named(f.name)) Some(f) else now.fields.find(n => resolver(n.name, f.name)).map(n =>
          f.copy(dataType = n.dataType))
      }
      val (parts, data) = (fields ++ added).partition(f => entry.partitionColumnNames.exists(resolver(_, f.name)))
      catalog.alterTable(entry.copy(schema = StructType(data ++ parts)))
      catalog.refreshTable(table.identifier)
      return Nil
    }
    if (kind == "position") {
      // The table's new order (meta columns first), partition columns kept last as Spark keeps them in an entry.
      val order = new HudiRelation(session.sqlContext, Map("path" -> path), None).schema.fieldNames
        .map(_.toLowerCase(java.util.Locale.ROOT)).zipWithIndex.toMap
      val (parts, data) = entry.schema.fields.toSeq.partition(f => entry.partitionColumnNames.exists(resolver(_, f.name)))
      val sorted = data.sortBy(f => order.getOrElse(f.name.toLowerCase(java.util.Locale.ROOT), Int.MaxValue)) ++ parts
      catalog.alterTable(entry.copy(schema = StructType(sorted)))
      catalog.refreshTable(table.identifier)
      return Nil
    }
    val fields = entry.schema.fields.toSeq.flatMap { f =>
      val named = columns.exists(resolver(_, f.name))
      if (!named) Some(f)
      else if (kind == "drop") None
      else if (kind == "rename") Some(f.copy(name = newName))
      else Some(f.copy(dataType = newType.get))
    }
    catalog.alterTable(entry.copy(schema = StructType(fields)))
    catalog.refreshTable(table.identifier)
    Nil
  }
}
