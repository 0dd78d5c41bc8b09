{#-- SQL of the Hudi generic tests (tests/hudi_tests.sql). Each returns the failing rows. --#}

{% macro hudi_sql_list(values) %}
  {%- set quoted = [] -%}
  {%- for v in values -%}
    {%- do quoted.append("'" ~ (v | replace("'", "\\'")) ~ "'") -%}
  {%- endfor -%}
  {{- return(quoted | join(', ')) -}}
{% endmacro %}

{% macro hudi_no_pending_instants_sql(model) %}
select instant, action, state
from {{ hudi_timeline(model) }}
where state <> 'COMPLETED'
{% endmacro %}

{% macro hudi_unique_record_key_sql(model) %}
select _hoodie_record_key, count(*) as n_records
from {{ model }}
group by _hoodie_record_key
having count(*) > 1
{% endmacro %}

{% macro hudi_commit_count_sql(model, min_count=none, max_count=none, action=none) %}
  {%- if min_count is none and max_count is none -%}
    {{ exceptions.raise_compiler_error("hudi_commit_count on " ~ model ~ ": set min_count, max_count or both") }}
  {%- endif -%}
  {%- set actions = hudi_commit_actions() if action is none else ([action] if action is string else action) -%}
select n_commits
from (
  select count(*) as n_commits
  from {{ hudi_timeline(model) }}
  where state = 'COMPLETED' and action in ({{ hudi_sql_list(actions) }})
) counted
where {% if min_count is not none %}n_commits < {{ min_count }}{% endif %}
  {%- if min_count is not none and max_count is not none %} or {% endif -%}
  {%- if max_count is not none %}n_commits > {{ max_count }}{% endif %}
{% endmacro %}

{% macro hudi_latest_commit_sql(model, operation=none, min_inserts=none, max_inserts=none, min_updates=none,
                                max_updates=none, min_deletes=none, max_deletes=none) %}
  {%- set checks = [] -%}
  {%- if operation is not none -%}
    {%- do checks.append("upper(operation) = upper('" ~ operation ~ "')") -%}
  {%- endif -%}
  {%- for column, low, high in [('num_inserts', min_inserts, max_inserts), ('num_updates', min_updates, max_updates),
                                ('num_deletes', min_deletes, max_deletes)] -%}
    {%- if low is not none -%}{%- do checks.append(column ~ " >= " ~ low) -%}{%- endif -%}
    {%- if high is not none -%}{%- do checks.append(column ~ " <= " ~ high) -%}{%- endif -%}
  {%- endfor -%}
with commits as (
  select * from {{ hudi_timeline(model) }}
  where state = 'COMPLETED' and action in ({{ hudi_sql_list(hudi_commit_actions()) }})
),
latest as (
  select * from commits order by instant desc limit 1
)
select instant, action, operation, num_inserts, num_updates, num_deletes, 'latest commit does not match' as failure
from latest
where not ({{ checks | join(' and ') if checks else 'true' }})
union all
select null, null, null, null, null, null, 'no completed commit'
from (select count(*) as n from commits) c
where c.n = 0
{% endmacro %}
