package dbthudi;

import java.io.IOException;

import org.apache.hudi.common.config.TypedProperties;
import org.apache.hudi.common.engine.RecordContext;
import org.apache.hudi.common.model.HoodieRecord;
import org.apache.hudi.common.model.HoodieRecordMerger;
import org.apache.hudi.common.table.read.BufferedRecord;

/** A custom merger for the CUSTOM merge mode's feature table (tests/java_hudi/make_feature_tables.py): the first
 *  version of a record wins, which no built-in merge mode does, so a reader that ignores the merger shows it. */
public class KeepFirstMerger implements HoodieRecordMerger {
  public static final String ID = "dbt-hudi-keep-first";

  @Override
  public <T> BufferedRecord merge(BufferedRecord<T> older, BufferedRecord<T> newer, RecordContext<T> context,
                                  TypedProperties props) throws IOException {
    return older;
  }

  @Override
  public HoodieRecord.HoodieRecordType getRecordType() {
    return HoodieRecord.HoodieRecordType.SPARK;
  }

  @Override
  public String getMergingStrategy() {
    return ID;
  }
}
