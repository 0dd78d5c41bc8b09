// The planner strategy that expands every `HudiRelation` of a query when it is planned.
package hudiengine.spark

import org.apache.spark.sql.catalyst.expressions.{Alias, And, Attribute, AttributeSet}
import org.apache.spark.sql.catalyst.planning.PhysicalOperation
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LogicalPlan, Project}
import org.apache.spark.sql.execution.{SparkPlan, SparkStrategy}
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}

/** Expands every `HudiRelation` of a query when the query is planned, with the query's projections and filters
 *  above the expansion so that Spark's optimizer pushes them into the parquet scan and the merge source. */
object HudiStrategy extends SparkStrategy {
  override def apply(plan: LogicalPlan): Seq[SparkPlan] = plan match {
    case PhysicalOperation(projects, filters, l: LogicalRelation) if l.relation.isInstanceOf[HudiRelation] =>
      val relation = l.relation.asInstanceOf[HudiRelation]
      // The columns the query reads (at least one: a count reads rows, not columns).
      val used = AttributeSet(projects.flatMap(_.references) ++ filters.flatMap(_.references))
      val columns = l.output.filter(used.contains) match {
        case Seq() => l.output.take(1)
        case some => some
      }
      val data = relation.snapshot(Filters.encode(filters), l.catalogTable, columns.map(_.name))
      val byName = data.output.map(a => a.name -> a).toMap
      // The expansion answers with the relation's own attributes, so the operators above bind unchanged.
      val renamed = Project(columns.map(o => Alias(byName(o.name), o.name)(exprId = o.exprId)), data)
      val filtered = filters.reduceOption(And).fold[LogicalPlan](renamed)(Filter(_, renamed))
      val top = Project(projects, filtered)
      // One parquet scan (a copy-on-write snapshot): Spark's file scan strategy collapses the projections and
      // filters above its relation itself (pruning columns, pushing filters), so the optimizer, a fixed cost of every
      // query, is not run again. A union, the merge or an empty relation need it to push filters into each part.
      if (ParquetScanOnly.unapply(data)) return planLater(top) :: Nil
      val optimized = relation.spark.sessionState.optimizer.execute(top)
      // The optimizer may drop aliases it sees no parent of (RemoveRedundantAliases): answer with `top`'s ids again.
      val output = optimized.output.zip(top.output).map { case (got, want) =>
        if (got.exprId == want.exprId) got else Alias(got, want.name)(exprId = want.exprId)
      }
      planLater(if (output.forall(_.isInstanceOf[Attribute])) optimized else Project(output, optimized)) :: Nil
    case _ => Nil
  }
}

/** An expansion that is Spark's parquet scan under projections and filters only. */
object ParquetScanOnly {
  def unapply(plan: LogicalPlan): Boolean = plan match {
    case Project(_, child) => unapply(child)
    case Filter(_, child) => unapply(child)
    case LogicalRelation(_: HadoopFsRelation, _, _, _, _) => true
    case _ => false
  }
}
