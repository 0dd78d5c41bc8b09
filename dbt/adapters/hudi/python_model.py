"""Python models on `method: session`: `def model(dbt, session)` runs in this process on the adapter's SparkSession,
and the DataFrame it returns goes to the same Hudi write path as a SQL model's rows.

dbt compiles a Python model into its code followed by `py_script_postfix` (the `dbtObj` with `ref`, `source`,
`config`, `this`, `is_incremental`). dbt-spark runs such code only on Databricks; here it is executed in a fresh
namespace, `dbt.ref()` reads tables through this session's catalog (Hudi tables included).
"""
from __future__ import annotations

from typing import Any

from dbt.adapters.hudi.errors import HudiModelError


def run_python_model(spark, model: str, code: str):
    """The Spark DataFrame of the Python model `model` (a pandas DataFrame is converted)."""
    namespace: dict[str, Any] = {"__name__": f"dbt_python_model_{model}", "spark": spark}
    try:
        exec(compile(code, f"<python model {model}>", "exec"), namespace)
    except Exception as e:
        raise HudiModelError(f"model {model}: the Python model's code failed to load: {type(e).__name__}: {e}") from e
    if not callable(namespace.get("model")) or "dbtObj" not in namespace:
        raise HudiModelError(f"model {model}: a Python model defines `def model(dbt, session)` returning a "
                             f"DataFrame; none was found")
    try:
        df = namespace["model"](namespace["dbtObj"](spark.table), spark)
    except Exception as e:
        raise HudiModelError(f"model {model}: model(dbt, session) failed: {type(e).__name__}: {e}") from e
    return as_spark_frame(spark, model, df)


def as_spark_frame(spark, model: str, df):
    from pyspark.sql import DataFrame

    if isinstance(df, DataFrame):
        return df
    try:
        import pandas
    except ImportError:  # pragma: no cover - pandas is a dependency of the spark extra
        pandas = None
    if pandas is not None and isinstance(df, pandas.DataFrame):
        return spark.createDataFrame(df)
    if hasattr(df, "to_spark"):  # pandas-on-Spark
        return df.to_spark()
    raise HudiModelError(f"model {model}: model(dbt, session) returned {type(df).__name__}; expected a Spark or "
                         f"pandas DataFrame")
