// Spark's parquet scan of exactly the base files a read plan names, and the filter that leaves a split slice's
// logged keys to the merge.
package hudiengine.spark

import org.apache.hadoop.fs.{FileStatus, Path}

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BinaryExpression, Expression, Predicate}
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.execution.datasources.{FileIndex, PartitionDirectory}
import org.apache.spark.sql.types.StructType
import org.apache.spark.unsafe.types.UTF8String

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
