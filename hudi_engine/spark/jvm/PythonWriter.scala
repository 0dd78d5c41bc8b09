// The write side of the `hudi` short name: `df.write.format("hudi")` (by path and `saveAsTable`), and Hudi's Spark SQL
// writes on `USING hudi` tables (CREATE TABLE ... AS SELECT, INSERT INTO / INSERT OVERWRITE, UPDATE, DELETE, MERGE
// INTO, ALTER TABLE ADD COLUMNS, TRUNCATE). The JVM only plans: every write is handed, as a DataFrame with its path,
// options and save mode, to the Python engine's one write (`hudi_engine.spark.write`) through a py4j callback the
// Python driver registers (`hudi_engine.spark.save`), as pyspark's `foreachBatch` does. A Spark process without a
// Python driver (the Thrift server) has no callback, and its writes are refused. This file: that callback.
package hudiengine.spark

import java.util.Locale

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, SaveMode}
import org.apache.spark.sql.types.{StringType, StructField, StructType}
import org.apache.spark.sql.catalyst.util.CaseInsensitiveMap

/** The Python driver's write, implemented in Python (`hudi_engine.spark.save.PythonWriter`). Returns JSON:
 *  `{"result": <the WriteResult, or null when nothing was written>}` or `{"error": <message>}`. */
trait PythonWriter {
  def write(data: DataFrame, path: String, options: java.util.Map[String, String], mode: String,
            target: String): String
}

/** Where the JVM finds the Python driver's writer. */
object Writes {
  @volatile private var writer: PythonWriter = null
  private val json = new com.fasterxml.jackson.databind.ObjectMapper()

  /** Called by the Python driver (`register_data_source`). */
  def register(w: PythonWriter): Unit = writer = w

  @volatile private var last: String = "null"

  def registered(): Boolean = writer != null

  /** The last write's `WriteResult` as JSON ("null": none, or nothing written), for `last_write_result()`. */
  def lastResult(): String = last

  /** Writes `data` to the Hudi table at `path`, or throws the engine's refusal as one clear error. `target` names
   *  the table in errors ("hudi table at <path>", "catalog table db.t"). */
  def write(target: String, data: DataFrame, path: String, options: Map[String, String], mode: SaveMode): Unit = {
    val w = writer
    if (w == null) {
      throw new IllegalArgumentException(
        s"$target: writing a Hudi table needs the Python engine in the Spark driver (a pyspark session that ran " +
          "hudi_engine.spark.register_data_source); this Spark process has none (e.g. the Thrift server), so it " +
          "only reads Hudi tables")
    }
    val answer = json.readTree(w.write(data, path, options.asJava, mode.name.toLowerCase(Locale.ROOT), target))
    if (answer.has("error")) throw new IllegalArgumentException(answer.get("error").asText())
    last = json.writeValueAsString(answer.get("result"))
  }

  /** The schema of the relation a save returns to Spark, which only builds its cache refresh from it (Spark's
   *  SaveIntoDataSourceCommand): the written rows' columns behind the meta columns, not planned, because planning
   *  the table (the Python planner's listing of every file slice) would cost a read after every save. */
  def savedSchema(data: DataFrame): StructType = StructType(
    HudiWriteNames.MetaColumns.map(StructField(_, StringType)) ++
      data.schema.fields.filterNot(f => HudiWriteNames.MetaColumns.contains(f.name)))

  /** Options as the caller spelled their keys (Spark lower-cases a case-insensitive map's keys when iterated). */
  def spelled(options: Map[String, String]): Map[String, String] = options match {
    case c: CaseInsensitiveMap[String @unchecked] => c.originalMap
    case m => m
  }
}
