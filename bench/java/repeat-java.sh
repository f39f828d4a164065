#!/bin/bash
# A `java` for the evaluation kit's NAME/run.sh (its JAVA variable) that runs the workload's program
# REPEAT_N times in one JVM through Repeat.java, for bench/steady-bench.sh. The kit's command line is
# kept (its JVM options and class path, the program's arguments); only the program is wrapped:
#   -cp CP MAIN ARGS...                      -> -cp CP:HARNESS Repeat N SWITCH MAIN ARGS...
#   -m jdk.compiler/com.sun.tools.javac.Main -> Repeat ... com.sun.tools.javac.Main#compile (main exits)
#   org.apache.fop.cli.Main -q -fo F -pdf P  -> Repeat ... FopRender F P (main exits)
#   LuceneBench INDEX ...                    -> Repeat ... --clean INDEX LuceneBench INDEX ...
# Environment: REPEAT_JAVA (the real java), REPEAT_N, REPEAT_SWITCH ("none" or probes), REPEAT_HARNESS
# (where Repeat and FopRender are compiled).
set -euo pipefail
opts=() cp=
while [ $# -gt 0 ]; do
  case $1 in
    -cp|-classpath) cp=$2; shift 2 ;;
    -m) main=${2#*/}; shift 2; break ;;
    -*) opts+=("$1"); shift ;;
    *) main=$1; shift; break ;;
  esac
done
pre=()
case $main in
  com.sun.tools.javac.Main) main=com.sun.tools.javac.Main#compile ;;
  org.apache.fop.cli.Main)
    fo= pdf=
    while [ $# -gt 0 ]; do
      case $1 in -fo) fo=$2; shift 2 ;; -pdf) pdf=$2; shift 2 ;; *) shift ;; esac
    done
    main=FopRender; set -- "$fo" "$pdf" ;;
  LuceneBench) pre=(--clean "$1") ;;
esac
exec "$REPEAT_JAVA" "${opts[@]}" -cp "${cp:+$cp:}$REPEAT_HARNESS" Repeat "$REPEAT_N" "$REPEAT_SWITCH" "${pre[@]}" "$main" "$@"
