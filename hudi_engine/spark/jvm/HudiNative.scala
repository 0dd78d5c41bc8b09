// The native read path of the `hudi` short name: compiled on the user's machine by pyspark's own Scala compiler
// (hudi_engine/spark/native.py), never shipped as a binary.
//
// `spark.read.format("hudi")`, `spark.table(...)` and SQL on a `USING hudi` catalog table resolve to a
// `HudiRelation`: only the table's location, options and schema, which Spark may cache with the catalog entry.
// Nothing is listed there. `HudiStrategy` (a planner strategy) expands the relation when a query is planned: it asks
// the Python engine for the read plan as of the latest completed commit (the `hudi_engine_plan` Python data source,
// whose schema carries the plan), and plans the base files through Spark's own parquet scan (a `HadoopFsRelation`
// over exactly those files: column pruning, filter pushdown into row groups, vectorized decoding). Slices with log
// files are split by record key: their base files go to the same scan but for the keys their logs write or delete
// (`UnloggedKey`), and Python tasks the planner made (`MergeTasks`: Spark's MapInArrow, in `hudi_merge`'s Python
// environment) merge only those keys (and the slices the plan leaves whole).
// The query's filters and projections go above the union and Spark's optimizer pushes them into every part.
// Writes: HudiWrite.scala.
package hudiengine.spark

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import org.apache.hadoop.fs.{FileStatus, Path}

import org.apache.spark.sql.{DataFrame, SaveMode, SparkSessionExtensions, SQLContext}
import org.apache.spark.sql.classic.SparkSession
import org.apache.spark.sql.catalyst.{FunctionIdentifier, InternalRow, TableIdentifier}
import org.apache.spark.sql.catalyst.analysis.{RelationTimeTravel, UnresolvedRelation, UnresolvedTableValuedFunction}
import org.apache.spark.sql.catalyst.catalog.{CatalogTable, CatalogUtils}
import org.apache.spark.sql.catalyst.expressions.{Alias, And, Attribute, AttributeReference, AttributeSet,
  BinaryExpression, Expression, GetStructField, Literal, Predicate, PythonUDF}
import org.apache.spark.sql.catalyst.parser.{ParameterContext, ParserInterface, SqlStatementSplitResult,
  TemporalIdentifier}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.catalyst.planning.PhysicalOperation
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LeafNode, LocalRelation, LogicalPlan, MapInArrow, Project,
  SubqueryAlias, Union}
import org.apache.spark.sql.execution.{SparkPlan, SparkStrategy}
import org.apache.spark.sql.execution.datasources.{FileIndex, HadoopFsRelation, LogicalRelation, PartitionDirectory}
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.sources.{BaseRelation, CreatableRelationProvider, DataSourceRegister, RelationProvider,
  SchemaRelationProvider}
import org.apache.spark.sql.types.{BinaryType, DataType, StringType, StructField, StructType}
import org.apache.spark.unsafe.types.UTF8String

/** The `hudi` short name: reads (`HudiRelation`) and `df.write.format("hudi")` (`Writes`, HudiWrite.scala). */
class DefaultSource extends RelationProvider with SchemaRelationProvider with CreatableRelationProvider
    with DataSourceRegister {
  override def shortName(): String = Names.Hudi

  override def createRelation(ctx: SQLContext, parameters: Map[String, String]): BaseRelation =
    new HudiRelation(ctx, parameters, None)

  override def createRelation(ctx: SQLContext, parameters: Map[String, String], schema: StructType): BaseRelation =
    new HudiRelation(ctx, parameters, Some(schema))

  /** `df.write.format("hudi").options(...).mode(...).save(path)`: the engine's write, the save mode as Hudi gives
   *  it meaning (decided on the Python side, `hudi_engine.spark.save`). */
  override def createRelation(ctx: SQLContext, mode: SaveMode, parameters: Map[String, String],
      data: DataFrame): BaseRelation = {
    val path = parameters.getOrElse("path", throw new IllegalArgumentException(
      "hudi: no table path to write to; use save(path), option('path', ...) or saveAsTable(name)"))
    val options = Writes.spelled(parameters).filter { case (k, _) => !k.equalsIgnoreCase("path") }
    Writes.write(s"hudi table at $path", data, path, options, mode)
    new HudiRelation(ctx, Map("path" -> path), Some(Writes.savedSchema(data)))
  }
}

object Names {
  val Hudi = "hudi"
  val PlanSource = "hudi_engine_plan" // Python: hudi_engine.spark.native.HudiPlanSource
  val MergeSource = "hudi_merge" // Python: hudi_engine.spark.datasource.HudiMergeSource
  val PathComment = "hudi.path="
  val CommitTime = "_hoodie_commit_time"
  val RecordKey = "_hoodie_record_key"
  val FileMetadata = "_metadata" // Spark's metadata column of a file scan (file_name: the base file's name)
  val Filters = "hudi_engine.read.filters" // Python: hudi_engine.spark.native.FILTERS
  val SparkOpensFiles = "hudi_engine.read.spark_opens_files" // Python: hudi_engine.spark.native.SPARK_OPENS_FILES
  val TableName = "hudi_engine.read.table_name" // Python: hudi_engine.spark.native.TABLE_NAME
  val AsOfInstant = "as.of.instant" // Python: hudi_engine.config.keys.AS_OF_INSTANT
  val TableChanges = "hudi_table_changes" // Python: hudi_engine.spark.table_changes.FUNCTION_NAME
}

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

/** A Hudi table as Spark's catalog and analyzer see it: location, options, schema. Planned by `HudiStrategy`. */
class HudiRelation(ctx: SQLContext, parameters: Map[String, String], userSchema: Option[StructType],
    sqlOptions: Set[String] = Set.empty) extends BaseRelation {
  override def sqlContext: SQLContext = ctx
  def spark: SparkSession = ctx.sparkSession.asInstanceOf[SparkSession]

  /** A catalog table's schema carries the table's location in a column comment (its OPTIONS and LOCATION may be
   *  the warehouse's); a path given to `load` otherwise. */
  lazy val tablePath: String = userSchema.flatMap(HudiRelation.pathComment)
    .orElse(parameters.get("path"))
    .getOrElse(throw new IllegalArgumentException(
      s"hudi: no table path; use load(path), or a catalog table whose ${Names.CommitTime} column has the comment " +
        s"'${Names.PathComment}<uri>' (hudi_engine.spark.create_catalog_table)"))

  /** The options the Python planner reads with: the caller's, with the table path resolved. A catalog table takes
   *  only its entry's own OPTIONS: Spark caches a catalog table's relation with the options of its first read
   *  (`spark.read.options(...).table(name)`), which would pin every later query of the name to them. Such a read
   *  is refused, and the cached relation dropped so that the next query of the name resolves it afresh.
   *  `sqlOptions` are the ones a SQL clause set on a relation Spark does not cache (`TIMESTAMP AS OF`). */
  def readOptions(catalog: Option[CatalogTable] = None): Map[String, String] = {
    catalog.foreach { t =>
      val own = (t.storage.properties.keySet ++ sqlOptions).map(_.toLowerCase)
      val extra = parameters.keySet.filter(k => k.toLowerCase != "path" && !own.contains(k.toLowerCase))
      if (extra.nonEmpty) {
        spark.sessionState.catalog.invalidateCachedTable(t.identifier)
        throw new IllegalArgumentException(
          s"hudi: catalog table ${t.identifier.unquotedString} read with options ${extra.toSeq.sorted.mkString(", ")}: " +
            "a catalog name reads the table as its entry declares (Spark would keep one read's options for every " +
            "later query of the name); for time travel use SELECT ... FROM name TIMESTAMP AS OF '<instant>', " +
            "for time travel or an incremental read by path use " +
            s"""spark.read.format("hudi").options(...).load("$tablePath")""")
      }
    }
    parameters.filter { case (k, _) => k.toLowerCase != "path" } + ("path" -> tablePath)
  }

  override lazy val schema: StructType = userSchema.getOrElse(plan("[]").schema)

  // Spark's statistics for join planning: the bytes of the base files the last unpruned plan scans natively;
  // unknown (Spark's default: never broadcast) when slices with log files are merged. Planned once if no query
  // has planned yet; a location that cannot be planned reports the default too, and the query's own planning
  // raises the error (with the catalog name, which only the strategy knows).
  @volatile private var knownSize: Option[Long] = None

  override def sizeInBytes: Long = knownSize.getOrElse {
    try { plan("[]"); knownSize.get }
    catch { case scala.util.control.NonFatal(_) => spark.sessionState.conf.defaultSizeInBytes }
  }

  /** The Hadoop file system of the table's location, if Spark's Hadoop file systems open it (else every slice goes
   *  to the merge source, and plans are not kept: see `PlanCache`). */
  private lazy val fileSystem: Option[org.apache.hadoop.fs.FileSystem] =
    try { Some(new Path(tablePath).getFileSystem(spark.sessionState.newHadoopConf())) }
    catch { case _: Exception => None }

  private def sparkOpensFiles: Boolean = fileSystem.isDefined

  private def plan(filters: String, catalog: Option[CatalogTable] = None): ReadPlan = {
    val name = catalog.map(_.identifier.unquotedString)
    val options = readOptions(catalog) + (Names.Filters -> filters) +
      (Names.SparkOpensFiles -> sparkOpensFiles.toString) ++ name.map(Names.TableName -> _)
    // Taken before planning: a commit landing while the plan is made changes the next query's stamp.
    val stamp = fileSystem.filterNot(_ => tablePath.contains("?")).flatMap(TimelineStamp.of(_, tablePath))
    val p = stamp.flatMap(PlanCache.get(options, _)).getOrElse {
      val fresh = Planner.plan(spark, options)
      stamp.foreach(PlanCache.put(options, _, fresh))
      fresh
    }
    if (filters == "[]" || knownSize.isEmpty) { // a pruned plan's size is a lower bound until an unpruned one
      knownSize = Some(if (p.sourceOptions.isEmpty) p.files.map(_._2).sum
                       else spark.sessionState.conf.defaultSizeInBytes)
    }
    p
  }

  override def toString: String = s"HudiRelation($tablePath)"

  /** The table as of the latest completed commit (or the options' instant), in `schema`'s columns, as an analyzed
   *  plan: a union of Spark's parquet scan of the base-only slices, the scan of the logged slices' base files but
   *  for their logged keys, and the merge source over the logged keys (and the slices merged whole), each with
   *  only `columns` (the query's; all when empty: the merge source decodes only what it is asked for, since a
   *  Python source gets no column pruning from Spark). `filters` (as `Filters.encode` writes them) prune
   *  partitions; `catalog`, the catalog entry read, if any (its name is for the planner's errors). */
  def snapshot(filters: String = "[]", catalog: Option[CatalogTable] = None,
               columns: Seq[String] = Nil): LogicalPlan = {
    val plan = this.plan(filters, catalog)
    val data = StructType(schema.fields.map(f => StructField(f.name, f.dataType, f.nullable)))
    val names = if (columns.isEmpty) data.fieldNames.toSeq else columns
    val wanted = StructType(names.map(n => data(n)))
    def project(part: LogicalPlan): LogicalPlan =
      if (part.output.map(_.name) == names) part
      else Project(names.map(n => part.output.find(_.name == n).getOrElse(
        throw new IllegalStateException(s"hudi: no column $n in $part"))), part)
    val parts = Seq.newBuilder[LogicalPlan]
    if (plan.files.nonEmpty) {
      val scan = fileScan(plan.path, plan.files, data)
      parts += project(plan.window.fold[LogicalPlan](scan)(w =>
        spark.baseRelationToDataFrame(scan.relation).where(w).queryExecution.analyzed))
    }
    if (plan.splitFiles.nonEmpty) {
      // The record key splits the rows, whether or not the relation's (declared) schema has it.
      val keyed = if (data.fieldNames.contains(Names.RecordKey)) data
                  else data.add(StructField(Names.RecordKey, org.apache.spark.sql.types.StringType, nullable = true))
      val scan = fileScan(plan.path, plan.splitFiles, keyed)
      val withFile = scan.withMetadataColumns()
      val metadata = withFile.output.find(_.name == Names.FileMetadata).getOrElse(
        throw new IllegalStateException(s"hudi: Spark's parquet scan has no ${Names.FileMetadata} column"))
      val fileName = GetStructField(metadata,
        metadata.dataType.asInstanceOf[StructType].fieldIndex("file_name"), Some("file_name"))
      val key = scan.output.find(_.name == Names.RecordKey).getOrElse(
        throw new IllegalStateException(s"hudi: no ${Names.RecordKey} column to split logged slices by"))
      parts += project(Project(scan.output, Filter(UnloggedKey(fileName, key, plan.splitKeys), withFile)))
    }
    plan.merge match {
      case Some(tasks) => parts += project(tasks.plan(spark, wanted))
      case None => plan.sourceOptions.foreach { options => // a CDC query, or nothing to read
        parts += project(spark.read.format(Names.MergeSource).schema(wanted).options(options).load(plan.path)
          .queryExecution.analyzed)
      }
    }
    parts.result() match {
      case Seq() =>
        spark.createDataFrame(spark.sparkContext.emptyRDD[org.apache.spark.sql.Row], wanted).queryExecution.analyzed
      case Seq(one) => one
      case many => Union(many)
    }
  }

  /** Spark's parquet scan of exactly `files` (URI, size), as an analyzed plan (a relation's attributes need no
   *  analysis, which every query would otherwise pay for). */
  private def fileScan(root: String, files: Seq[(String, Long)], data: StructType): LogicalRelation = {
    val index = new BaseFileIndex(root, files)
    LogicalRelation(HadoopFsRelation(index, StructType(Nil), data, None, new ParquetFileFormat, Map.empty)(spark),
      isStreaming = false)
  }
}

/** The logged keys of split slices, by base file name; compared by identity (plans compare and hash expressions,
 *  and this may hold many keys). */
final class LoggedKeys(val byFile: Map[UTF8String, java.util.HashSet[UTF8String]]) extends Serializable {
  def count: Int = byFile.valuesIterator.map(_.size).sum
}

object LoggedKeys {
  val empty = new LoggedKeys(Map.empty)
}

/** True for a row of a split slice's base file whose record key its log files do not touch: that row is read as is
 *  by Spark's parquet scan, and the logged keys' merged rows come from the merge source. `file` is the row's base
 *  file name (`_metadata.file_name`). Interpreted (CodegenFallback): a hash lookup per row of the split files. */
case class UnloggedKey(file: Expression, key: Expression, logged: LoggedKeys)
    extends BinaryExpression with Predicate with CodegenFallback {
  override def left: Expression = file
  override def right: Expression = key
  override def nullable: Boolean = false

  override def eval(input: InternalRow): Any = {
    val k = key.eval(input)
    if (k == null) true
    else logged.byFile.get(file.eval(input).asInstanceOf[UTF8String]) match {
      case Some(keys) => !keys.contains(k.asInstanceOf[UTF8String])
      case None => true
    }
  }

  override def toString: String = s"hudi_unlogged_key($file, $key, ${logged.count} logged keys)"
  override def sql: String = s"hudi_unlogged_key(${file.sql}, ${key.sql})"
  override protected def withNewChildrenInternal(newLeft: Expression, newRight: Expression): UnloggedKey =
    copy(file = newLeft, key = newRight)
}

object HudiRelation {
  def pathComment(schema: StructType): Option[String] = schema.fields
    .sortBy(_.name != Names.CommitTime)
    .flatMap(_.getComment())
    .find(_.startsWith(Names.PathComment))
    .map(_.stripPrefix(Names.PathComment).trim)
    .filter(_.nonEmpty)
}

/** What changes when anything lands on a table's timeline: the files of its timeline folder (`.hoodie/`, and
 *  `.hoodie/timeline/` in timeline layout 2) with their sizes and modification times. A commit, compaction, clean,
 *  rollback or archival adds or removes a file there (`hoodie.properties`, rewritten in place, changes its time).
 *  This only detects change: what the timeline means is read by the Python planner alone. */
object TimelineStamp {
  def of(fs: org.apache.hadoop.fs.FileSystem, tablePath: String): Option[Seq[(String, Long, Long)]] =
    try {
      val meta = new Path(tablePath, ".hoodie")
      val top = fs.listStatus(meta).toSeq
      val layout2 = top.find(s => s.isDirectory && s.getPath.getName == "timeline")
        .map(d => fs.listStatus(d.getPath).toSeq.map(s => ("timeline/", s))).getOrElse(Nil)
      val files = (top.map(s => ("", s)) ++ layout2).collect {
        case (folder, s) if !s.isDirectory => (folder + s.getPath.getName, s.getLen, s.getModificationTime)
      }
      if (files.isEmpty) None else Some(files.sorted)
    } catch { case scala.util.control.NonFatal(_) => None } // no timeline there: the planner says what is wrong
}

/** The plans of the last queries, by their planner options (table, read options, filters), each with the timeline
 *  stamp taken before it was made; a query whose table's stamp is unchanged reuses its plan without a round trip to
 *  the Python planner (the data source `hudi_engine_plan`, tens of milliseconds a query), any other plans afresh.
 *  A plan is a function of the table's files and the options, and the files a plan names change only with the
 *  timeline. Bounded: `MaxPlans` plans, least recently used out; a plan with more than `MaxKeys` logged keys is not
 *  kept. */
object PlanCache {
  val MaxPlans = 64
  val MaxKeys = 100000

  private val plans = new java.util.LinkedHashMap[Map[String, String], (Seq[(String, Long, Long)], ReadPlan)](
      16, 0.75f, true) {
    override def removeEldestEntry(
        eldest: java.util.Map.Entry[Map[String, String], (Seq[(String, Long, Long)], ReadPlan)]): Boolean =
      size() > MaxPlans
  }

  def get(options: Map[String, String], stamp: Seq[(String, Long, Long)]): Option[ReadPlan] = plans.synchronized {
    Option(plans.get(options)).collect { case (kept, plan) if kept == stamp => plan }
  }

  def put(options: Map[String, String], stamp: Seq[(String, Long, Long)], plan: ReadPlan): Unit =
    if (plan.splitKeys.count <= MaxKeys) plans.synchronized { plans.put(options, (stamp, plan)) }

  def clear(): Unit = plans.synchronized { plans.clear() }
}

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

/** Exactly the base files the plan names, with the sizes the planner listed: nothing is listed or stat'ed here. */
class BaseFileIndex(root: String, files: Seq[(String, Long)]) extends FileIndex {
  private val statuses: Array[FileStatus] =
    files.map { case (f, size) => new FileStatus(size, false, 1, 128L * 1024 * 1024, 0L, new Path(f)) }.toArray

  override def rootPaths: Seq[Path] = Seq(new Path(root))
  override def listFiles(partitionFilters: Seq[Expression], dataFilters: Seq[Expression]): Seq[PartitionDirectory] =
    Seq(PartitionDirectory(InternalRow.empty, statuses))
  override def inputFiles: Array[String] = statuses.map(_.getPath.toString)
  override def refresh(): Unit = ()
  override def sizeInBytes: Long = files.map(_._2).sum
  override def partitionSchema: StructType = StructType(Nil)
}

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

/** `spark.sql.extensions=hudiengine.spark.HudiExtensions`. */
class HudiExtensions extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    extensions.injectPlannerStrategy(_ => HudiStrategy)
    extensions.injectResolutionRule(session => HudiWriteRule(session))
    extensions.injectParser((_, delegate) => new HudiSqlParser(delegate))
    extensions.injectResolutionRule(session => HudiByNameRule(session))
  }
}

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
  override def parsePlan(sqlText: String): LogicalPlan = wrapped(delegate.parsePlan(sqlText))
  override def parsePlanWithParameters(sqlText: String, parameters: ParameterContext): LogicalPlan =
    wrapped(delegate.parsePlanWithParameters(sqlText, parameters))
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

  private def hudiTable(parts: Seq[String]): Option[CatalogTable] = {
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
