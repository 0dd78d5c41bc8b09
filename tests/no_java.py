"""A machine without Java, for a child process (issue 11): JAVA_HOME unset and a PATH on which every command is
still there but `java`; where this runs as root and may make a mount namespace (`unshare -m`), the system JDK's
folder is also covered by an empty tmpfs, so not even its absolute path leads to it. A JDK inside this venv (from
PyPI, what tests/jvm.sh installs) stays visible: it is what such a machine gets.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path


def without_java(command: str, bin_dir: Path, env: dict[str, str]) -> tuple[list[str], dict[str, str], list[str]]:
    """(argv, env, hidden JDK folders) that run the bash `command` as on a machine without Java; the command
    fails if `java` is still found."""
    hidden = _jdk_homes(env)
    env = {k: v for k, v in env.items() if k != "JAVA_HOME"}
    env["PATH"] = _path_without_java(bin_dir, env.get("PATH", ""))
    if hidden and _can_unshare():
        mounts = " && ".join(f'mount -t tmpfs none "{h}"' for h in hidden)
        return ["unshare", "-m", "bash", "-c", f"{mounts} && ! command -v java && {command}"], env, hidden
    return ["bash", "-c", f"! command -v java && {command}"], env, hidden


def _path_without_java(bin_dir: Path, path: str) -> str:
    """A folder holding every command of `path` (the first of each name) but `java`."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    for folder in path.split(os.pathsep):
        if not os.path.isdir(folder):
            continue
        for entry in os.scandir(folder):
            target = bin_dir / entry.name
            if entry.name != "java" and not target.exists() and not target.is_symlink():
                target.symlink_to(entry.path)
    return str(bin_dir)


def _jdk_homes(env: dict[str, str]) -> list[str]:
    """The folders of the Java the environment offers now (PATH's `java`, JAVA_HOME), but a JDK of this venv."""
    homes = []
    java = shutil.which("java", path=env.get("PATH"))
    if java:
        homes.append(str(Path(os.path.realpath(java)).parents[1]))
    if env.get("JAVA_HOME"):
        homes.append(os.path.realpath(env["JAVA_HOME"]))
    venv = os.path.realpath(sys.prefix)
    return [h for h in dict.fromkeys(homes) if not h.startswith(venv)]


def _can_unshare() -> bool:
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return False
    return subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode == 0
