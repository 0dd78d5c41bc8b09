package dbthudi;

import java.io.IOException;
import java.util.Properties;

import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.generic.IndexedRecord;
import org.apache.hudi.common.model.OverwriteWithLatestAvroPayload;
import org.apache.hudi.common.util.Option;

/** A custom payload class for the custom-payload feature tables (tests/java_hudi/make_feature_tables.py): of two
 *  versions of a record, the one with the smaller ordering value `ts` wins (the first on a tie), the opposite of
 *  Hudi's built-in event-time ordering, so a reader that ignores the payload class shows it. Compiles against the
 *  0.15 and the 1.2 bundles. */
public class KeepSmallestPayload extends OverwriteWithLatestAvroPayload {

  public KeepSmallestPayload(GenericRecord record, Comparable orderingVal) {
    super(record, orderingVal);
  }

  public KeepSmallestPayload(Option<GenericRecord> record) {
    super(record);
  }

  @Override
  @SuppressWarnings("unchecked")
  public OverwriteWithLatestAvroPayload preCombine(OverwriteWithLatestAvroPayload older) {
    return older.getOrderingVal().compareTo(getOrderingVal()) <= 0 ? older : this;
  }

  @Override
  public Option<IndexedRecord> combineAndGetUpdateValue(IndexedRecord stored, Schema schema, Properties props)
      throws IOException {
    return combineAndGetUpdateValue(stored, schema);
  }

  @Override
  @SuppressWarnings("unchecked")
  public Option<IndexedRecord> combineAndGetUpdateValue(IndexedRecord stored, Schema schema) throws IOException {
    Option<IndexedRecord> incoming = getInsertValue(schema);
    if (!incoming.isPresent()) {
      return incoming;  // a delete
    }
    Comparable<Object> kept = (Comparable<Object>) ((GenericRecord) stored).get("ts");
    Object offered = ((GenericRecord) incoming.get()).get("ts");
    return kept != null && kept.compareTo(offered) <= 0 ? Option.of(stored) : incoming;
  }
}
