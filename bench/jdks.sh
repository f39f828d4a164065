# Sourced by the benchmarks that run on every JDK: sets HOMES to the JAVA_HOMEs given as arguments, or
# else to every JDK under /usr/lib/jvm (each once, whatever links point at it).
#   . bench/jdks.sh; installed_jdks "$@"
installed_jdks() {
  HOMES=("$@")
  [ ${#HOMES[@]} -gt 0 ] && return
  local j h
  for j in /usr/lib/jvm/*/bin/javac; do
    h=$(dirname "$(dirname "$(readlink -f "$j")")")
    case " ${HOMES[*]-} " in *" $h "*) ;; *) HOMES+=("$h") ;; esac
  done
}
