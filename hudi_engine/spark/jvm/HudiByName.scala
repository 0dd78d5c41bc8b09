// Reads that name a Hudi table by its catalog name where Spark's analyzer cannot take it (time travel,
// `hudi_table_changes`): the parser that marks them and the resolution rule that resolves them.
package hudiengine.spark

import org.apache.spark.sql.classic.SparkSession
import org.apache.spark.sql.catalyst.{FunctionIdentifier, TableIdentifier}
import org.apache.spark.sql.catalyst.analysis.{RelationTimeTravel, UnresolvedRelation, UnresolvedTableValuedFunction}
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression, Literal}
import org.apache.spark.sql.catalyst.parser.{ParameterContext, ParserInterface, SqlStatementSplitResult,
  TemporalIdentifier}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.plans.logical.{LeafNode, LogicalPlan, SubqueryAlias}
import org.apache.spark.sql.execution.datasources.LogicalRelation
import org.apache.spark.sql.types.{DataType, StringType, StructType}
import org.apache.spark.unsafe.types.UTF8String

/** Hudi's Spark SQL spellings that name a Hudi table by its catalog name where Spark's analyzer cannot take it:
 *  `SELECT ... FROM t TIMESTAMP AS OF '<instant>'` (Spark refuses time travel on every v1 table, a `USING hudi`
 *  entry is one, before an extension's rule sees the clause) and `hudi_table_changes('<db.table>', ...)` (a Python
 *  table function, analyzed where there is no catalog). The parser hands each over wrapped in `HudiByName`, which
 *  `HudiByNameRule` resolves before Spark's analyzer does. */
class HudiSqlParser(delegate: ParserInterface) extends ParserInterface {
  private def wrapped(plan: LogicalPlan): LogicalPlan = plan.transformUpWithSubqueries {
    case t: RelationTimeTravel => HudiByName(t)
    case f: UnresolvedTableValuedFunction if f.name.size == 1 && f.name.head.equalsIgnoreCase(Names.TableChanges) =>
      HudiByName(f)
  }
  // Hudi's CALL statements first (Procedures.scala): Spark's own CALL resolves only its catalogs' procedures.
  override def parsePlan(sqlText: String): LogicalPlan =
    CallParser.parse(sqlText).getOrElse(HudiAlter.wrap(wrapped(delegate.parsePlan(sqlText))))
  override def parsePlanWithParameters(sqlText: String, parameters: ParameterContext): LogicalPlan =
    CallParser.parse(sqlText).getOrElse(HudiAlter.wrap(wrapped(delegate.parsePlanWithParameters(sqlText, parameters))))
  override def parseQuery(sqlText: String): LogicalPlan = wrapped(delegate.parseQuery(sqlText))
  override def parseExpression(sqlText: String): Expression = delegate.parseExpression(sqlText)
  override def parseTableIdentifier(sqlText: String): TableIdentifier = delegate.parseTableIdentifier(sqlText)
  override def parseFunctionIdentifier(sqlText: String): FunctionIdentifier = delegate.parseFunctionIdentifier(sqlText)
  override def parseMultipartIdentifier(sqlText: String): Seq[String] = delegate.parseMultipartIdentifier(sqlText)
  override def parseTemporalTableIdentifier(sqlText: String): TemporalIdentifier =
    delegate.parseTemporalTableIdentifier(sqlText)
  override def parseRoutineParam(sqlText: String): StructType = delegate.parseRoutineParam(sqlText)
  override def splitStatements(sqlText: String): SqlStatementSplitResult = delegate.splitStatements(sqlText)
  override def parseTableSchema(sqlText: String): StructType = delegate.parseTableSchema(sqlText)
  override def parseDataType(sqlText: String): DataType = delegate.parseDataType(sqlText)
}

/** A parsed `RelationTimeTravel` or `hudi_table_changes` call that `HudiByNameRule` looks at first. */
case class HudiByName(parsed: LogicalPlan) extends LeafNode {
  override def output: Seq[Attribute] = Nil
  override lazy val resolved: Boolean = false
}

/** Resolves `HudiByName`, as Hudi's own rules do:
 *  - time travel on a `USING hudi` table of the session catalog reads it with `as.of.instant` set to the clause's
 *    literal (an instant time, or a date or timestamp string);
 *  - `hudi_table_changes` whose first argument has no `/` takes it as a catalog name: the call gets the table's
 *    location instead.
 *  Anything else goes back to Spark as it was parsed. */
case class HudiByNameRule(session: org.apache.spark.sql.SparkSession) extends Rule[LogicalPlan] {
  private val SessionCatalog = "spark_catalog" // Spark's CatalogManager.SESSION_CATALOG_NAME (private to Spark)

  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperatorsUp {
    case HudiByName(travel @ RelationTimeTravel(u: UnresolvedRelation, timestamp, version)) if !u.isStreaming =>
      hudiTable(u.multipartIdentifier).fold[LogicalPlan](travel)(timeTravel(_, timestamp, version))
    case HudiByName(f: UnresolvedTableValuedFunction) => f.functionArgs match {
      case Literal(name: UTF8String, _: StringType) +: rest if !name.toString.contains("/") =>
        val parts = scala.util.Try(session.sessionState.sqlParser.parseMultipartIdentifier(name.toString)).toOption
        parts.flatMap(hudiTable).fold[LogicalPlan](f) { t =>
          f.copy(functionArgs = Literal(SqlTable.location(t)) +: rest)
        }
      case _ => f
    }
    case HudiByName(parsed) => parsed
  }

  def hudiTable(parts: Seq[String]): Option[CatalogTable] = {
    val catalog = session.asInstanceOf[SparkSession].sessionState.catalog
    val inSession = parts match {
      case Seq(c, rest @ _*) if parts.size == 3 && c.equalsIgnoreCase(SessionCatalog) => rest
      case _ => parts
    }
    if (parts.isEmpty || catalog.isTempView(parts) || inSession.size > 2) None
    else HudiWriteRule.hudiCatalogTable(session, TableIdentifier(inSession.last, inSession.init.headOption))
  }

  private def timeTravel(table: CatalogTable, timestamp: Option[Expression], version: Option[String]): LogicalPlan = {
    val name = table.identifier.unquotedString
    val instant = timestamp match {
      case Some(Literal(v, _)) if v != null => v.toString
      case Some(other) => throw new IllegalArgumentException(
        s"hudi: TIMESTAMP AS OF ${other.sql} on $name: Hudi time travel takes a literal instant time " +
          "('20240101120000000') or date / timestamp string ('2024-01-01 12:00:00'), not an expression")
      case None => throw new IllegalArgumentException(
        s"hudi: VERSION AS OF ${version.getOrElse("")} on $name: a Hudi table's timeline has instants, not " +
          "versions; use TIMESTAMP AS OF '<instant time>'")
    }
    // The table's columns as of the instant, as Hudi reads them: not the entry's, which a later ALTER TABLE changed.
    val options = table.storage.properties + ("path" -> SqlTable.location(table)) + (Names.AsOfInstant -> instant)
    val relation = new HudiRelation(session.sqlContext, options, None, sqlOptions = Set(Names.AsOfInstant))
    SubqueryAlias(table.identifier.nameParts, LogicalRelation(relation, table))
  }
}
