// One read as the Python planner makes it, and the round trip that asks for it.
package hudiengine.spark

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

import org.apache.spark.sql.classic.SparkSession
import org.apache.spark.sql.types.{DataType, StructType}
import org.apache.spark.unsafe.types.UTF8String

/** One read, as the Python engine plans it (`hudi_engine.spark.native.plan_json`). */
case class ReadPlan(
    path: String,
    schema: StructType,
    files: Seq[(String, Long)],
    splitFiles: Seq[(String, Long)],
    splitKeys: LoggedKeys,
    sourceOptions: Option[Map[String, String]],
    merge: Option[MergeTasks],
    window: Option[String])

object Planner {
  private val json = new ObjectMapper()
  private val calls = new java.util.concurrent.atomic.AtomicLong()

  /** How many plans this JVM asked the Python planner for (the rest came from `PlanCache`). */
  def roundTrips: Long = calls.get()

  /** The read plan: the Python planner runs in Spark's planning Python worker, on the driver, with no Spark job;
   *  the plan travels back as the metadata of the one field of its data source's schema. */
  def plan(spark: SparkSession, options: Map[String, String]): ReadPlan = {
    calls.incrementAndGet()
    val field = spark.read.format(Names.PlanSource).options(options).load().schema.head
    val node = json.readTree(field.metadata.getString("plan"))
    def files(key: String): Seq[(String, Long)] = optional(node, key).toSeq
      .flatMap(_.elements().asScala.map(f => (f.get(0).asText(), f.get(1).asLong())))
    val splitKeys = optional(node, "split_keys").map { byFile =>
      new LoggedKeys(byFile.properties().asScala.map { e =>
        val keys = new java.util.HashSet[UTF8String]()
        e.getValue.elements().asScala.foreach(k => keys.add(UTF8String.fromString(k.asText())))
        UTF8String.fromString(e.getKey) -> keys
      }.toMap)
    }.getOrElse(LoggedKeys.empty)
    ReadPlan(
      node.get("path").asText(),
      DataType.fromJson(node.get("schema").toString).asInstanceOf[StructType],
      files("files"),
      files("split_files"),
      splitKeys,
      optional(node, "source_options").map(_.properties().asScala.map(e => e.getKey -> e.getValue.asText()).toMap),
      optional(node, "merge").map(m => MergeTasks(m.get("plan").asText(),
        m.get("tasks").elements().asScala.map(t => java.util.Base64.getDecoder.decode(t.asText())).toVector)),
      optional(node, "window").map(_.asText()))
  }

  private def optional(node: JsonNode, key: String): Option[JsonNode] =
    Option(node.get(key)).filterNot(_.isNull)
}

/** The logged keys of split slices, by base file name; compared by identity (plans compare and hash expressions,
 *  and this may hold many keys). */
final class LoggedKeys(val byFile: Map[UTF8String, java.util.HashSet[UTF8String]]) extends Serializable {
  def count: Int = byFile.valuesIterator.map(_.size).sum
}

object LoggedKeys {
  val empty = new LoggedKeys(Map.empty)
}
