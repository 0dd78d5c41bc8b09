"""The dbt project of tests/dbt/test_features.py: one model per feature a dbt user reaches for, over two simulated days.

Seeds: `events` (id, part, name, score, ts, day; `event_time: ts` for microbatch) and `people` (the snapshot source,
one row per id and day). Day 2 changes name and score of ids 2 and 4, adds 7 (existing partition) and 8 (new
partition d); in `people`, id 2 changes, id 3 is deleted, id 6 arrives.
"""
from __future__ import annotations

from pathlib import Path

SCHEMA = "feat"

EVENTS = [  # id, part, name, score, day (ts is that day at midnight)
    (1, "a", "ann", 10, 1), (2, "a", "bob", 20, 1), (3, "b", "cy", 30, 1), (4, "b", "dee", 40, 1),
    (5, "c", "eve", 50, 1), (6, "c", "fay", 60, 1),
    (2, "a", "BOB", 21, 2), (4, "b", "DEE", 41, 2), (7, "c", "gil", 70, 2), (8, "d", "hal", 80, 2),
]
PEOPLE = [  # id, name, score, updated_at day, day (the rows the source shows that day)
    (1, "ann", 1, 1, 1), (2, "bob", 2, 1, 1), (3, "cy", 3, 1, 1), (4, "dee", 4, 1, 1),
    (1, "ann", 1, 1, 2), (2, "bobby", 5, 2, 2), (4, "dee", 4, 1, 2), (6, "fay", 6, 2, 2),
]


def events_of(day: int | None = None) -> list[tuple]:
    return [r for r in EVENTS if day is None or r[4] == day]


def latest_events(upto: int = 2) -> dict[int, tuple]:
    out: dict[int, tuple] = {}
    for r in EVENTS:
        if r[4] <= upto:
            out[r[0]] = r
    return out


def model(config: str, incremental: str, first: str) -> str:
    return (f"{{{{ config({config}) }}}}\n{{% if is_incremental() %}}\n{incremental}\n{{% else %}}\n{first}\n"
            f"{{% endif %}}\n")


COLS = "id, part, name, score, ts"
DAY_ROWS = f"select {COLS} from {{{{ ref('events') }}}} where day = {{{{ var('day') }}}}"
UPTO_ROWS = f"select {COLS} from {{{{ ref('events') }}}} where day = 1"  # a first run sees day 1 only
HUDI = "materialized='hudi_incremental', unique_key='id', precombine_field='ts', partition_by='part'"
SPARK = "materialized='incremental', file_format='hudi'"

MODELS: dict[str, str] = {
    # merge_update_columns / merge_exclude_columns: day 2 sends new names and scores; only score changes.
    "mu_cow": model(f"{HUDI}, merge_update_columns=['score']", DAY_ROWS, UPTO_ROWS),
    "mu_mor": model(f"{HUDI}, table_type='mor', merge_update_columns=['score']", DAY_ROWS, UPTO_ROWS),
    "mx_mor": model(f"{HUDI}, table_type='mor', merge_exclude_columns=['name', 'ts']", DAY_ROWS, UPTO_ROWS),
    # dbt-spark's spelling, its options / tblproperties honoured.
    "sp_merge": model(f"{SPARK}, incremental_strategy='merge', unique_key='id', partition_by='part', "
                      "options={'type': 'mor', 'preCombineField': 'ts'}, "
                      "tblproperties={'hoodie.parquet.compression.codec': 'gzip'}, merge_update_columns=['score']",
                      DAY_ROWS, UPTO_ROWS),
    "sp_append": model(f"{SPARK}, options={{'primaryKey': 'id'}}", DAY_ROWS, UPTO_ROWS),  # dbt-spark's default: append
    "sp_overwrite": model(f"{SPARK}, incremental_strategy='insert_overwrite', unique_key='id', partition_by='part'",
                          DAY_ROWS, UPTO_ROWS),
    # microbatch: one Hudi instant per batch (day); with unique_key an upsert, without it the batch's partitions
    # are overwritten. The ref to `events` is filtered to each batch by dbt (the seed's event_time).
    "mb_upsert": ("{{ config(materialized='incremental', file_format='hudi', incremental_strategy='microbatch', "
                  "unique_key='id', event_time='ts', batch_size='day', begin='2024-01-01') }}\n"
                  f"select {COLS} from {{{{ ref('events') }}}}\n"),
    "mb_partitions": ("{{ config(materialized='incremental', file_format='hudi', incremental_strategy='microbatch', "
                      "partition_by='event_day', options={'primaryKey': 'id'}, event_time='ts', batch_size='day', "
                      "begin='2024-01-01') }}\n"
                      f"select {COLS}, date_format(ts, 'yyyy-MM-dd') as event_day from {{{{ ref('events') }}}}\n"),
    # A batch that fails while HUDI_BREAK_DAY names its day; `dbt retry` runs that batch alone.
    "mb_retry": ("{{ config(materialized='incremental', file_format='hudi', incremental_strategy='microbatch', "
                 "unique_key='id', event_time='ts', batch_size='day', begin='2024-01-01', tags=['retry']) }}\n"
                 f"select {COLS}, case when day = {{{{ env_var('HUDI_BREAK_DAY', '0') }}}} "
                 "then cast(raise_error('broken batch') as int) else day end as day\n"
                 "from {{ ref('events') }}\n"),
    # Contracts: columns and types checked by dbt, not_null / check constraints on the rows before the write.
    "contracted": model(f"{HUDI}", DAY_ROWS, UPTO_ROWS),
    "contract_types": model(f"{HUDI}, tags=['bad']", DAY_ROWS, UPTO_ROWS),
    "contract_rows": model(f"{HUDI}, tags=['contract_rows']",
                           "select id, part, name, case when id = 7 then null else score end as score, ts "
                           "from {{ ref('events') }} where day = {{ var('day') }}", UPTO_ROWS),
    # --empty builds the table with no rows; the next normal run builds it in full.
    "emptied": model(f"{HUDI}, table_type='mor'", DAY_ROWS, UPTO_ROWS),
    # persist_docs; the description of _hoodie_commit_time is not written over the path comment.
    "documented": model(f"{HUDI}, persist_docs={{'relation': true, 'columns': true}}", DAY_ROWS, UPTO_ROWS),
    # Table services: compaction / cleaning settings, and the run-operations.
    "svc_mor": model(f"{HUDI}, table_type='mor', compaction={{'inline': false}}, "
                     "cleaning={'policy': 'commits', 'retained': 1, 'automatic': false}", DAY_ROWS, UPTO_ROWS),
    "svc_inline": model(f"{HUDI}, table_type='mor', compaction={{'delta_commits': 1}}", DAY_ROWS, UPTO_ROWS),
    "svc_rollback": model(f"{HUDI}", DAY_ROWS, UPTO_ROWS),
    # clustering: planned by the second run (schedule_only, 2 commits), executed by `hudi_cluster`.
    "svc_cluster": model(f"{HUDI}, clustering={{'cluster_by': ['score', 'id'], 'layout': 'z-order', "
                         "'schedule_only': true, 'commits': 2}", DAY_ROWS, UPTO_ROWS),
    "svc_busy": model(f"{HUDI}, tags=['busy']", DAY_ROWS, UPTO_ROWS),
    # archival stops at the metadata table's latest compaction (on by default): compacted at every commit here
    "svc_archive": model(f"{HUDI}, cleaning={{'policy': 'commits', 'retained': 1, 'automatic': false}}, "
                         "hudi_options={'hoodie.metadata.compact.max.delta.commits': '1'}", DAY_ROWS, UPTO_ROWS),
    "a_view": "{{ config(materialized='view') }}\nselect 1 as id\n",
    # Unit tests (schema.yml): the incremental branch reads {{ this }}.
    "ut_latest": model(f"{HUDI}",
                       f"select {COLS} from {{{{ ref('events') }}}} where ts > (select max(ts) from {{{{ this }}}})",
                       UPTO_ROWS),
    # Hudi's documented workflows (issue 38), as dbt spells them; tests/spark/test_hudi_workflows.py walks them in
    # spark.sql. CRUD: the first run inserts day 1; day 2 updates 2 and 4, inserts 7 and 8, and deletes 5 (a change
    # type of `d`, Hudi's `_hoodie_is_deleted`).
    "wf_crud": model(f"{HUDI}, table_type='mor', change_type_column='op'",
                     f"select {COLS}, 'u' as op from {{{{ ref('events') }}}} where day = {{{{ var('day') }}}}\n"
                     f"union all select {COLS}, 'd' as op from {{{{ ref('events') }}}} where id = 5",
                     f"select {COLS}, 'i' as op from {{{{ ref('events') }}}} where day = 1"),
    # The incremental query: each run pulls what wf_crud's commits wrote after the last pulled commit.
    "wf_crud_pull": ("{{ config(materialized='hudi_incremental', unique_key='id', "
                     "precombine_field='source_commit_time') }}\n"
                     "select c.id, c.name, c.score, c._hoodie_commit_time as source_commit_time\n"
                     "from {% if is_incremental() %}{{ hudi_table_changes(ref('wf_crud'), "
                     "hudi_max_value(this, 'source_commit_time', 'earliest')) }}"
                     "{% else %}{{ ref('wf_crud') }}{% endif %} c\n"),
    # Schema evolution: day 2 drops `name`, widens `score` to bigint and adds `region`.
    "wf_evolve": model(f"{HUDI}, on_schema_change='sync_all_columns'",
                       "select id, part, cast(score as bigint) as score, ts, upper(part) as region "
                       "from {{ ref('events') }} where day = {{ var('day') }}", UPTO_ROWS),
    # Procedures: savepointed after day 1 (hudi_savepoint), day 2's run undone by hudi_restore, the timeline read
    # by CALLs from a run-operation (the project's wf_call macro).
    "wf_ops": model(f"{HUDI}", DAY_ROWS, UPTO_ROWS),
    # Bad input (run alone, each must fail with one message and change nothing).
    "bad_update_column": model(f"{HUDI}, merge_update_columns=['score', 'nope'], tags=['bad']", DAY_ROWS, UPTO_ROWS),
    "bad_spark": model(f"{SPARK}, incremental_strategy='merge', options={{'compression': 'zstd'}}, tags=['bad']",
                       DAY_ROWS, UPTO_ROWS),
}

PYTHON_MODEL = '''
def model(dbt, session):
    dbt.config(materialized="hudi_incremental", unique_key="id", precombine_field="ts", partition_by="part",
               table_type="mor")
    events = dbt.ref("events")
    day = 2 if dbt.is_incremental else 1
    rows = events.filter(events.day == day).select("id", "part", "name", "score", "ts")
    return rows.withColumn("score", rows.score * 100)
'''

SNAPSHOTS = {
    "snap_ts": """
{% snapshot snap_ts %}
{{ config(unique_key='id', strategy='timestamp', updated_at='updated_at', hard_deletes='invalidate') }}
select id, name, score, updated_at from {{ ref('people') }} where day = {{ var('day') }}
{% endsnapshot %}
""",
    "snap_check": """
{% snapshot snap_check %}
{{ config(unique_key='id', strategy='check', check_cols=['name', 'score'], hard_deletes='new_record',
          table_type='mor', file_format='hudi') }}
select id, name, score, updated_at from {{ ref('people') }} where day = {{ var('day') }}
{% endsnapshot %}
""",
}

SCHEMA_YML = """
version: 2
models:
  - name: contracted
    config:
      contract: {enforced: true}
    columns:
      - name: id
        data_type: bigint
        constraints: [{type: not_null}, {type: primary_key}]
      - name: part
        data_type: string
      - name: name
        data_type: string
      - name: score
        data_type: int
        constraints: [{type: check, expression: "score >= 0"}]
      - name: ts
        data_type: timestamp
  - name: contract_types
    config:
      contract: {enforced: true}
    columns:
      - {name: id, data_type: bigint}
      - {name: part, data_type: int}
      - {name: name, data_type: string}
      - {name: score, data_type: int}
      - {name: ts, data_type: timestamp}
  - name: contract_rows
    config:
      contract: {enforced: true}
    columns:
      - {name: id, data_type: bigint}
      - {name: part, data_type: string}
      - {name: name, data_type: string}
      - {name: score, data_type: int, constraints: [{type: not_null}]}
      - {name: ts, data_type: timestamp}
  - name: documented
    description: "People's scores (documented: the 'relation' comment)"
    columns:
      - name: id
        description: the person's id
      - name: score
        description: "score, it's the latest"
      - name: _hoodie_commit_time
        description: not written over the path comment
  - name: mu_cow
    data_tests: [hudi_no_pending_instants, hudi_unique_record_key]

unit_tests:
  - name: ut_latest_takes_rows_after_this
    model: ut_latest
    overrides:
      macros: {is_incremental: true}
    given:
      - input: ref('events')
        rows:
          - {id: 1, part: a, name: x, score: 1, ts: "2024-01-01 00:00:00", day: 1}
          - {id: 2, part: a, name: y, score: 2, ts: "2024-01-02 00:00:00", day: 2}
          - {id: 3, part: b, name: z, score: 3, ts: "2024-01-03 00:00:00", day: 3}
      - input: this
        rows:
          - {id: 1, part: a, name: x, score: 1, ts: "2024-01-02 00:00:00"}
    expect:
      rows:
        - {id: 3, part: b, name: z, score: 3, ts: "2024-01-03 00:00:00"}
  - name: ut_latest_first_run_takes_day_one
    model: ut_latest
    overrides:
      macros: {is_incremental: false}
    given:
      - input: ref('events')
        rows:
          - {id: 1, part: a, name: x, score: 1, ts: "2024-01-01 00:00:00", day: 1}
          - {id: 2, part: a, name: y, score: 2, ts: "2024-01-02 00:00:00", day: 2}
    expect:
      rows:
        - {id: 1, part: a, name: x, score: 1, ts: "2024-01-01 00:00:00"}
"""


# Hudi's procedures from a run-operation: `CALL <procedure>(table => '<schema.model>'<, more args>)` on dbt's own
# Spark session, each output row logged as `wf_call <procedure>: <column>=<value> | ...`.
CALL_MACRO = """
{% macro wf_call(procedure, model, args='') %}
  {% set relation = ref(model) %}
  {% set result = run_query("call " ~ procedure ~ "(table => '" ~ relation.schema ~ "." ~ relation.identifier ~ "'"
                            ~ args ~ ")") %}
  {% for row in result.rows %}
    {% set cells = [] %}
    {% for column in result.column_names %}{% do cells.append(column ~ "=" ~ row[column]) %}{% endfor %}
    {{ log("wf_call " ~ procedure ~ ": " ~ (cells | join(" | ")), info=true) }}
  {% endfor %}
{% endmacro %}
"""


def write_project(root: Path) -> None:
    for folder in ("models", "seeds", "snapshots", "macros"):
        (root / folder).mkdir(parents=True)
    (root / "dbt_project.yml").write_text("""
name: features
version: "1.0"
config-version: 2
profile: features
vars: {day: 1}
seeds:
  features:
    events:
      +column_types: {id: bigint, part: string, name: string, score: int, ts: timestamp, day: int}
      +event_time: ts
    people:
      +column_types: {id: bigint, name: string, score: int, updated_at: timestamp, day: int}
""")
    (root / "profiles.yml").write_text(f"""
features:
  target: dev
  outputs:
    dev:
      type: hudi
      schema: {SCHEMA}
      threads: 4
      server_side_parameters:
        spark.master: "local[2]"
        spark.sql.shuffle.partitions: "2"
""")
    lines = ["id,part,name,score,ts,day"] + [f"{i},{p},{n},{s},2024-01-0{d} 00:00:00,{d}" for i, p, n, s, d in EVENTS]
    (root / "seeds" / "events.csv").write_text("\n".join(lines) + "\n")
    lines = ["id,name,score,updated_at,day"] + [f"{i},{n},{s},2024-01-0{u} 00:00:00,{d}" for i, n, s, u, d in PEOPLE]
    (root / "seeds" / "people.csv").write_text("\n".join(lines) + "\n")
    for name, sql in MODELS.items():
        (root / "models" / f"{name}.sql").write_text(sql)
    (root / "models" / "py_model.py").write_text(PYTHON_MODEL)
    (root / "models" / "schema.yml").write_text(SCHEMA_YML)
    (root / "macros" / "wf_call.sql").write_text(CALL_MACRO)
    for name, sql in SNAPSHOTS.items():
        (root / "snapshots" / f"{name}.sql").write_text(sql)
