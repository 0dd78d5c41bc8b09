// The resolution rule that turns Spark's plans of writes on `USING hudi` tables into Hudi's SQL commands.
package hudiengine.spark

import org.apache.spark.sql.SaveMode
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.catalyst.analysis.EliminateSubqueryAliases
import org.apache.spark.sql.catalyst.expressions.Literal
import org.apache.spark.sql.catalyst.plans.logical.{DeleteFromTable, InsertIntoStatement, LogicalPlan, MergeIntoTable,
  Project, UpdateTable}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.classic.SparkSession
import org.apache.spark.sql.execution.command.{AlterTableAddColumnsCommand, AlterTableDropPartitionCommand,
  ShowPartitionsCommand, TruncateTableCommand}
import org.apache.spark.sql.execution.datasources.{CreateTable, LogicalRelation}

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
    case AlterTableDropPartitionCommand(ident, specs, ifExists, _, _) => HudiWriteRule.hudiCatalogTable(session, ident)
      .fold[LogicalPlan](plan)(t => DropHudiPartitions(t, specs, ifExists, "ALTER TABLE DROP"))
    case ShowPartitionsCommand(ident, output, spec) => HudiWriteRule.hudiCatalogTable(session, ident)
      .fold[LogicalPlan](plan)(t => ShowHudiPartitions(t, spec, output))
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
    // Not waiting for the source: a source that reads the target itself (an SCD type 2 change set) is resolved in
    // the same pass of Spark's ResolveReferences that expands the stars, so the meta columns must be gone first.
    case m: MergeIntoTable if m.targetTable.resolved && HudiWriteRule.hudiTable(m.targetTable).isDefined =>
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
