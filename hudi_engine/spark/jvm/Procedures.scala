// Hudi's `CALL [db.]name(args)` statements: parsed here before Spark's parser (Spark 4 parses CALL for its own
// catalog procedures and answers Hudi's names with UNRESOLVED_ROUTINE), and run by the Python driver's
// procedures (`hudi_engine.procedures`) through a py4j callback that `register_data_source` registers, as writes
// are (PythonWriter.scala). A Spark process without a Python driver (the Thrift server) refuses them by name.
package hudiengine.spark

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.classic.SparkSession
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types._

/** The Python driver's procedures (`hudi_engine.spark.procedures.PythonProcedures`). Both answer JSON:
 *  `describe`: `{"schema": "<DDL of the output>"}`, `call`: `{"rows": [[...], ...]}`, or `{"error": <message>}`. */
trait PythonProcedures {
  def describe(name: String): String
  def call(session: org.apache.spark.sql.SparkSession, name: String, arguments: String): String
}

object Procedures {
  @volatile private var procedures: PythonProcedures = null
  private val json = new com.fasterxml.jackson.databind.ObjectMapper()

  /** Called by the Python driver (`register_data_source`). */
  def register(p: PythonProcedures): Unit = procedures = p

  def registered(): Boolean = procedures != null

  private def driver(name: String): PythonProcedures = {
    val p = procedures
    if (p == null) {
      throw new IllegalArgumentException(
        s"CALL $name: Hudi's procedures run in the Python engine of the Spark driver (a pyspark session that ran " +
          "hudi_engine.spark.register_data_source); this Spark process has none (e.g. the Thrift server), so it " +
          "only reads Hudi tables")
    }
    p
  }

  private def answer(text: String): com.fasterxml.jackson.databind.JsonNode = {
    val node = json.readTree(text)
    if (node.has("error")) throw new IllegalArgumentException(node.get("error").asText())
    node
  }

  /** The output schema of procedure `name`, or its refusal (unknown, or refused by name with the way out). */
  def schema(name: String): StructType = StructType.fromDDL(answer(driver(name).describe(name)).get("schema").asText())

  /** Runs `name` with the parsed arguments: `(name or null, literal)` pairs. */
  def call(session: org.apache.spark.sql.SparkSession, name: String, args: Seq[(Option[String], Any)],
           output: StructType): Seq[Row] = {
    val encoded = json.writeValueAsString(args.map { case (n, v) =>
      java.util.Arrays.asList[Any](n.orNull, v match {
        case d: BigDecimal => d.bigDecimal
        case other => other
      })
    }.asJava)
    val rows = answer(driver(name).call(session, name, encoded)).get("rows")
    rows.elements().asScala.map { r =>
      Row.fromSeq(output.fields.indices.map { i =>
        val v = r.get(i)
        if (v == null || v.isNull) null
        else output.fields(i).dataType match {
          case IntegerType => v.asInt()
          case LongType => v.asLong()
          case DoubleType => v.asDouble()
          case BooleanType => v.asBoolean()
          case _ => v.asText()
        }
      })
    }.toSeq
  }

  /** The location of the Hudi table a procedure's `table` argument names in `session`'s catalog (for the Python
   *  side's resolver). */
  def tableLocation(session: org.apache.spark.sql.SparkSession, name: String): String = {
    val parts = session.asInstanceOf[SparkSession].sessionState.sqlParser.parseMultipartIdentifier(name)
    val ident = parts match {
      case Seq(t) => TableIdentifier(t)
      case Seq(db, t) => TableIdentifier(t, Some(db))
      case Seq(c, db, t) if c.equalsIgnoreCase("spark_catalog") => TableIdentifier(t, Some(db))
      case _ => throw new IllegalArgumentException(s"table => '$name': expected a name of the session catalog " +
        "([db.]table), or give path => '<base path>'")
    }
    val catalog = session.asInstanceOf[SparkSession].sessionState.catalog
    if (!catalog.tableExists(ident)) {
      throw new IllegalArgumentException(s"table => '$name': the table or view ${catalog.qualifyIdentifier(ident)
        .unquotedString} cannot be found; give a catalog table, or path => '<base path>'")
    }
    val table = catalog.getTableMetadata(ident)
    if (!HudiWriteNames.isHudi(table.provider)) {
      throw new IllegalArgumentException(s"table => '$name': ${table.identifier.unquotedString} is not a Hudi table " +
        s"(${table.provider.getOrElse("no provider")})")
    }
    SqlTable.location(table)
  }
}

/** `CALL name(args)`: the procedure's rows, with its output columns (asked of the Python driver when parsed). */
case class HudiCall(name: String, args: Seq[(Option[String], Any)], override val output: Seq[Attribute])
    extends LeafRunnableCommand {
  override def run(spark: org.apache.spark.sql.SparkSession): Seq[Row] =
    Procedures.call(spark, name, args, StructType(output.map(a => StructField(a.name, a.dataType, a.nullable))))
}

/** The text of a `CALL` statement, or None for any other statement (left to Spark's parser). */
object CallParser {
  // CALL after blanks and SQL comments (`-- ...` lines, `/* ... */`), as a SQL file or dbt may send it.
  private val Call = "(?is)\\s*(?:(?:--[^\\n]*(?:\\n|$)|/\\*.*?\\*/)\\s*)*call\\s+(.*)".r

  def parse(sqlText: String): Option[HudiCall] = sqlText match {
    case Call(rest) if rest.trim.nonEmpty && (rest.trim.head.isLetter || rest.trim.head == '`') =>
      val p = new CallText(rest)
      val (name, args) = p.statement()
      val schema = Procedures.schema(name)
      Some(HudiCall(name, args, schema.fields.toIndexedSeq.map(f =>
        AttributeReference(f.name, f.dataType, f.nullable, f.metadata)())))
    case _ => None
  }
}

/** `[db.]name(arg, ...)` where an argument is `[name =>] literal`: a string ('...' or "...", '' or \' inside), a
 *  number, true / false, or NULL. */
private class CallText(text: String) {
  private var pos = 0

  private def fail(what: String): Nothing = throw new IllegalArgumentException(
    s"CALL: expected $what at position $pos of '${text.trim}'; Hudi's form is CALL name(arg => value, ...) or " +
      "CALL name(value, ...), values being string, number, boolean or NULL literals")

  private def skip(): Unit = while (pos < text.length && text(pos).isWhitespace) pos += 1

  private def peek(s: String): Boolean = { skip(); text.startsWith(s, pos) }

  private def expect(s: String): Unit = if (peek(s)) pos += s.length else fail(s"'$s'")

  private def identifier(): String = {
    skip()
    if (pos < text.length && text(pos) == '`') {
      val end = text.indexOf('`', pos + 1)
      if (end < 0) fail("a closing `")
      val id = text.substring(pos + 1, end); pos = end + 1; id
    } else {
      val start = pos
      while (pos < text.length && (text(pos).isLetterOrDigit || text(pos) == '_')) pos += 1
      if (start == pos) fail("a name")
      text.substring(start, pos)
    }
  }

  def statement(): (String, Seq[(Option[String], Any)]) = {
    var parts = Seq(identifier())
    while (peek(".")) { pos += 1; parts :+= identifier() }
    expect("(")
    val args = scala.collection.mutable.ArrayBuffer[(Option[String], Any)]()
    if (peek(")")) pos += 1
    else {
      var more = true
      while (more) {
        args += argument()
        if (peek(",")) pos += 1 else { expect(")"); more = false }
      }
    }
    skip()
    if (pos < text.length && text(pos) == ';') pos += 1
    skip()
    if (pos < text.length) fail("the end of the statement")
    (parts.last, args.toSeq) // Hudi looks a procedure up by its name; a namespace before it is not a catalog
  }

  private def argument(): (Option[String], Any) = {
    skip()
    val mark = pos
    if (pos < text.length && (text(pos).isLetter || text(pos) == '_' || text(pos) == '`')) {
      val id = identifier()
      if (peek("=>")) { pos += 2; return (Some(id), literal()) }
      pos = mark
    }
    (None, literal())
  }

  private def literal(): Any = {
    skip()
    if (pos >= text.length) fail("a value")
    val c = text(pos)
    if (c == '\'' || c == '"') quoted(c)
    else if (c.isDigit || c == '-' || c == '+' || c == '.') number()
    else identifier().toLowerCase match {
      case "true" => true
      case "false" => false
      case "null" => null
      case other => fail(s"a literal value, not $other")
    }
  }

  private def quoted(q: Char): String = {
    val out = new StringBuilder
    pos += 1
    while (true) {
      if (pos >= text.length) fail(s"a closing $q")
      val c = text(pos)
      if (c == '\\' && pos + 1 < text.length) { out += text(pos + 1); pos += 2 }
      else if (c == q && pos + 1 < text.length && text(pos + 1) == q) { out += q; pos += 2 }
      else if (c == q) { pos += 1; return out.toString }
      else { out += c; pos += 1 }
    }
    out.toString
  }

  private def number(): Any = {
    val start = pos
    if (text(pos) == '-' || text(pos) == '+') pos += 1
    while (pos < text.length && (text(pos).isDigit || ".eE".contains(text(pos)) ||
      ((text(pos) == '-' || text(pos) == '+') && "eE".contains(text(pos - 1))))) pos += 1
    val digits = text.substring(start, pos)
    if (pos < text.length && "lL".contains(text(pos))) pos += 1 // Spark's 5L
    if (digits.exists(".eE".contains(_))) {
      scala.util.Try(BigDecimal(digits)).getOrElse(fail("a number"))
    } else scala.util.Try(digits.toLong).getOrElse(fail("a number"))
  }
}
