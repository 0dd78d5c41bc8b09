// The read plans of the last queries, kept while their table's timeline is unchanged.
package hudiengine.spark

import org.apache.hadoop.fs.Path

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
