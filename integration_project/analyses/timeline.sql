-- `dbt compile` renders this; paste it into `dbt show --inline` or any Spark SQL session of the adapter.
select instant, action, state, operation, num_inserts, num_updates, num_deletes, files_written, bytes_written
from {{ hudi_timeline(ref('orders')) }}
order by instant
