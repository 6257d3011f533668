# Sourced by ./run.sh and ./bench.sh: sets JAVA_AOT to a java of JDK 25 or later, whose AOT cache (JEP 483, 514,
# 515) starts the processes faster than JDK 17's class-data sharing, or to nothing when there is none; and
# JAVA_AOT_VERSION to what that java says it is (`java -version`), which names its build.
# Looked for, in order: JAVA25_HOME, JAVA_HOME, the java on PATH, then the JDKs installed beside that java (its
# JDK's parent directory, where the OS's packages put each JDK they install).

# The feature release of the java $1 (17, 25, ...), or nothing when it does not run.
java_feature() {
  "$1" -version 2>&1 | sed -n 's/.* version "\([0-9]*\).*/\1/p' | head -n 1
}

# Prints the first java of JDK 25 or later among the candidates (resolved through its links), or nothing.
find_java_aot() {
  local candidates=() default home java seen=" "
  if [ -n "${JAVA25_HOME:-}" ]; then candidates+=("$JAVA25_HOME/bin/java"); fi
  if [ -n "${JAVA_HOME:-}" ]; then candidates+=("$JAVA_HOME/bin/java"); fi
  default="$(command -v java || true)"
  if [ -n "$default" ]; then
    candidates+=("$default")
    # The default java's JDK is DIR/<jdk>/bin/java once its links are resolved: the others are DIR/*/bin/java.
    home="$(dirname "$(dirname "$(readlink -f "$default")")")"
    for java in "$(dirname "$home")"/*/bin/java; do candidates+=("$java"); done
  fi
  for java in "${candidates[@]}"; do
    [ -x "$java" ] || continue
    java="$(readlink -f "$java")"
    case "$seen" in *" $java "*) continue ;; esac # one JDK under several names (Debian's links)
    seen="$seen$java "
    if [ "$(java_feature "$java")" -ge 25 ] 2>/dev/null; then
      echo "$java"
      return
    fi
  done
}

JAVA_AOT="$(find_java_aot)"
JAVA_AOT_VERSION=""
if [ -n "$JAVA_AOT" ]; then JAVA_AOT_VERSION="$("$JAVA_AOT" -version 2>&1 | tr '\n' ' ')"; fi
