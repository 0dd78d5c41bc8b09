// MERGE INTO a `USING hudi` table.
package hudiengine.spark

import org.apache.spark.sql.SaveMode
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.catalyst.expressions.{Alias, And, Attribute, AttributeReference, CaseWhen, Cast, EqualTo,
  ExprId, Expression, IsNotNull, Literal, Not}
import org.apache.spark.sql.catalyst.plans.LeftOuter
import org.apache.spark.sql.catalyst.plans.logical.{Assignment, DeleteAction, Filter, InsertAction, Join, JoinHint,
  LogicalPlan, MergeIntoTable, Project, UpdateAction}
import org.apache.spark.sql.types.BooleanType
import org.apache.spark.sql.classic.SparkSession
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.execution.datasources.LogicalRelation
import org.apache.spark.sql.Row

/** `MERGE INTO t USING s ON <record key equalities> WHEN MATCHED [AND c] THEN UPDATE SET ... | UPDATE SET * | DELETE
 *  WHEN NOT MATCHED [AND c] THEN INSERT ... | INSERT *`, as Hudi's MergeIntoHoodieTableCommand: the changed rows
 *  computed here by Spark (the source left outer joined to the table, each row taking the first clause, in clause
 *  order, whose condition holds) and written as one `upsert`; rows a delete clause chose carry
 *  `_hoodie_is_deleted = true` and delete their key in that upsert (Hudi's ExpressionPayload). Delete clauses only:
 *  one `delete`. `*` means the table's data columns: the meta columns are the engine's (the rule hides them from
 *  Spark's expansion). `WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *` with no conditions is the
 *  upsert of the source rows: no join, the engine's upsert finds the stored records by key.
 *  A keyless table (docs/keyless.md) takes any ON condition, as Hudi 0.14+ does: the join always runs, and each
 *  matched row keeps its stored `_hoodie_record_key` (a prepped write); unmatched rows get generated keys.
 *  Refused before anything is written: on a keyed table, an ON clause that is not equalities on the record key
 *  (checked against hoodie.properties on the Python side); SET of the record key or a partition column; WHEN NOT
 *  MATCHED BY SOURCE. */
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
    // A keyless table (Hudi 0.14+): any ON condition; the join finds each source row's stored record, whose
    // `_hoodie_record_key` the written row keeps (Hudi's MergeIntoHoodieTableCommand for a table without a
    // primary key).
    val keyless = SqlTable.keyless(session, table)
    val keyPairs = conjuncts(merge.mergeCondition).flatMap {
      case EqualTo(a: Attribute, b) if targetSet.contains(a) && !b.references.exists(targetSet.contains) => Some(a -> b)
      case EqualTo(b, a: Attribute) if targetSet.contains(a) && !b.references.exists(targetSet.contains) => Some(a -> b)
      case _ if keyless => None
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

    val rows = (if (keyless) None else upsertOfSource(keyPairs)).map { insert =>
      Project(target.output.map(c => Alias(typed(insert(c.exprId), c), c.name)()), merge.sourceTable)
    }.getOrElse {
      val matchedFlag = AttributeReference("__hudi_matched", BooleanType)()
      // A keyless table's stored key (the rule hid the meta columns from Spark's `*`): null for a row to insert.
      val stored = if (!keyless) target else target.transformUp {
        case Project(columns, l: LogicalRelation) if l.relation.isInstanceOf[HudiRelation] =>
          Project(columns ++ l.output.filter(_.name == Names.RecordKey), l)
      }
      val storedKey = stored.output.filter(_.name == Names.RecordKey)
      val flagged = Project(target.output ++ storedKey :+
        Alias(Literal(true), "__hudi_matched")(exprId = matchedFlag.exprId), stored)
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
      Project(columns ++ storedKey ++ marker, Filter(IsNotNull(chosen), joined))
    }
    val statement = if (deletesOnly) "merge_delete" else "merge"
    val options = SqlTable.options(table, Nil, statement, session) +
      (HudiWriteNames.AssignedColumns -> assigned.mkString(",")) +
      (HudiWriteNames.MergeKeys -> keyPairs.map(_._1.name).distinct.mkString(",")) ++
      (if (ownMarker.isEmpty && rows.output.exists(a => resolver(a.name, HudiWriteNames.IsDeleted)))
        Map(HudiWriteNames.DeleteMarker -> "true") else Map.empty)
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
