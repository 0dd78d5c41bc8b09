// The merge half of a read: Python tasks the planner made, run as Spark's MapInArrow.
package hudiengine.spark

import org.apache.spark.sql.classic.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{AttributeReference, PythonUDF}
import org.apache.spark.sql.catalyst.plans.logical.{LocalRelation, LogicalPlan, MapInArrow}
import org.apache.spark.sql.types.{BinaryType, StructType}

/** The merge half of a read as the Python planner made it (`hudi_engine.spark.merge_tasks`): the query fixed to its
 *  instant (`query`, a base64 pickle) and one pickled task per Spark task (slices, each whole or for its logged keys).
 *  Run as Spark's `MapInArrow` over one row per task, with a Python function named in a command pickled here: no
 *  Python round trip at planning (a Python data source costs three: create, push filters, plan partitions). The
 *  tasks run in the environment of the registered `hudi_merge` source (its Python, its shipped files). */
case class MergeTasks(query: String, tasks: Vector[Array[Byte]]) {
  def plan(spark: SparkSession, schema: StructType): LogicalPlan = {
    val source = spark.sessionState.dataSourceManager.lookupDataSource(Names.MergeSource)
    val function = source.createPythonFunction(
      MergeTasks.pickledCall("hudi_engine.spark.merge_tasks", "merge_function", Seq(schema.json, query)))
    val task = AttributeReference("task", BinaryType, nullable = false)()
    // Spark runs a local relation's rows in min(rows, default parallelism) tasks, one after the other within each.
    val input = LocalRelation(Seq(task), tasks.map(t => InternalRow(t)))
    val output = schema.fields.toSeq.map(f => AttributeReference(f.name, f.dataType, nullable = true)())
    val udf = PythonUDF(Names.MergeSource, function, schema, Seq(task), MergeTasks.MapArrowIter,
      udfDeterministic = true)
    MapInArrow(udf, output, input, isBarrier = false, profile = None)
  }
}

object MergeTasks {
  val MapArrowIter = 207 // pyspark's PythonEvalType.SQL_MAP_ARROW_ITER_UDF: (func, return type) in the command

  /** A pickle (protocol 2) that calls `module.name(*args)` when a Python worker loads the command. */
  def pickledCall(module: String, name: String, args: Seq[String]): Array[Byte] = {
    val out = new java.io.ByteArrayOutputStream()
    def ascii(text: String): Unit = out.write(text.getBytes(java.nio.charset.StandardCharsets.US_ASCII))
    out.write(0x80); out.write(2) // PROTO 2
    ascii(s"c$module\n$name\n(") // GLOBAL, MARK
    args.foreach { a =>
      val bytes = a.getBytes(java.nio.charset.StandardCharsets.UTF_8)
      out.write('X') // BINUNICODE, 4-byte little-endian length
      out.write(java.nio.ByteBuffer.allocate(4).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(bytes.length).array())
      out.write(bytes)
    }
    ascii("tR.") // TUPLE, REDUCE, STOP
    out.toByteArray
  }
}
