// A query's filters, encoded for the Python planner's partition pruning.
package hudiengine.spark

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper

import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.unsafe.types.UTF8String

/** A query's filters as the Python planner decodes them (`hudi_engine.spark.native.decode_filter`): JSON arrays
 *  `[op, column]`, `[op, column, value]`, `["Not", filter]`, in the names of Spark's data source filters;
 *  conjunctions split, the rest dropped (pruning only has to be conservative: Spark applies every filter to the
 *  rows). */
object Filters {
  import org.apache.spark.sql.catalyst.{expressions => e}
  import org.apache.spark.unsafe.types.UTF8String

  private val json = new ObjectMapper()

  def encode(filters: Seq[Expression]): String =
    json.writeValueAsString(filters.flatMap(conjuncts).flatMap(one).map(_.asJava).asJava)

  private def conjuncts(f: Expression): Seq[Expression] = f match {
    case e.And(a, b) => conjuncts(a) ++ conjuncts(b)
    case other => Seq(other)
  }

  private def value(v: Any): Option[AnyRef] = v match {
    case x: UTF8String => Some(x.toString)
    case x: java.lang.Integer => Some(x)
    case x: java.lang.Long => Some(x)
    case x: java.lang.Short => Some(x)
    case x: java.lang.Byte => Some(x)
    case x: java.lang.Double => Some(x)
    case x: java.lang.Float => Some(x)
    case x: java.lang.Boolean => Some(x)
    case _ => None
  }

  private object Lit {
    def unapply(x: Expression): Option[AnyRef] = x match {
      case e.Literal(v, _) if v != null => value(v)
      case _ => None
    }
  }

  private val flipped = Map("GreaterThan" -> "LessThan", "GreaterThanOrEqual" -> "LessThanOrEqual",
    "LessThan" -> "GreaterThan", "LessThanOrEqual" -> "GreaterThanOrEqual", "EqualTo" -> "EqualTo",
    "EqualNullSafe" -> "EqualNullSafe")

  private def comparison(op: String, left: Expression, right: Expression): Option[Seq[AnyRef]] = (left, right) match {
    case (a: e.Attribute, Lit(v)) => Some(Seq(op, a.name, v))
    case (Lit(v), a: e.Attribute) => Some(Seq(flipped(op), a.name, v))
    case _ => None
  }

  private def one(f: Expression): Option[Seq[AnyRef]] = f match {
    case e.Not(child) => one(child).map(c => Seq("Not", c.asJava))
    case e.IsNull(a: e.Attribute) => Some(Seq("IsNull", a.name))
    case e.IsNotNull(a: e.Attribute) => Some(Seq("IsNotNull", a.name))
    case e.In(a: e.Attribute, list) if list.forall(Lit.unapply(_).isDefined) =>
      Some(Seq("In", a.name, list.flatMap(Lit.unapply).asJava))
    case e.InSet(a: e.Attribute, set) if set.forall(v => v != null && value(v).isDefined) =>
      Some(Seq("In", a.name, set.toSeq.flatMap(value).asJava))
    case e.EqualTo(l, r) => comparison("EqualTo", l, r)
    case e.EqualNullSafe(l, r) => comparison("EqualNullSafe", l, r)
    case e.GreaterThan(l, r) => comparison("GreaterThan", l, r)
    case e.GreaterThanOrEqual(l, r) => comparison("GreaterThanOrEqual", l, r)
    case e.LessThan(l, r) => comparison("LessThan", l, r)
    case e.LessThanOrEqual(l, r) => comparison("LessThanOrEqual", l, r)
    case e.StartsWith(a: e.Attribute, Lit(v)) => Some(Seq("StringStartsWith", a.name, v))
    case e.EndsWith(a: e.Attribute, Lit(v)) => Some(Seq("StringEndsWith", a.name, v))
    case e.Contains(a: e.Attribute, Lit(v)) => Some(Seq("StringContains", a.name, v))
    case _ => None
  }
}
