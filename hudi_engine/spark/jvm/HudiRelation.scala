// The relation of a Hudi table (its location, options and schema) and its expansion into Spark's parquet scan of the
// base files and the merge of the logged keys, as of the read plan.
package hudiengine.spark

import org.apache.hadoop.fs.Path

import org.apache.spark.sql.SQLContext
import org.apache.spark.sql.classic.SparkSession
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.catalyst.expressions.GetStructField
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LogicalPlan, Project, Union}
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.sources.BaseRelation
import org.apache.spark.sql.types.{StructField, StructType}

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

object HudiRelation {
  def pathComment(schema: StructType): Option[String] = schema.fields
    .sortBy(_.name != Names.CommitTime)
    .flatMap(_.getComment())
    .find(_.startsWith(Names.PathComment))
    .map(_.stripPrefix(Names.PathComment).trim)
    .filter(_.nonEmpty)
}
