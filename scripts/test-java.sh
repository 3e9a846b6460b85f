#!/usr/bin/env bash
# JVM binding: `mvn verify` in bindings/java (builds the JNI library and the CLI with cargo,
# debug profile; runs the JUnit 5 suites, including the real-Pekko cluster and differential
# tests; Surefire prints "Tests run: N, Failures: F, ..."), then runs examples/java against the
# jars it built.
#
#   scripts/test-java.sh            (needs JDK 17+, Maven 3.8+, cargo; Maven Central reachable)
#   MVN_ARGS="-o" scripts/test-java.sh   (extra Maven arguments, e.g. offline)
set -euo pipefail
cd "$(dirname "$0")/.."

start=$(date +%s)
(cd bindings/java && mvn -B -ntp -Dstyle.color=never ${MVN_ARGS:-} verify)

echo "java: running examples/java/GettingStarted.java"
jars="bindings/java/shardline/target/shardline-0.1.0.jar:bindings/java/shardline-pekko/target/shardline-pekko-0.1.0.jar"
deps="$(cat bindings/java/shardline-pekko/target/classpath.txt)"
out="$(java -cp "$jars:$deps" examples/java/GettingStarted.java)"
printf '%s\n' "$out"
if ! printf '%s\n' "$out" | grep -q '^done$'; then
  echo "java: the example did not finish" >&2
  exit 1
fi
echo "java: mvn verify and the example passed in $(( $(date +%s) - start ))s"
