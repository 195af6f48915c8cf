#!/usr/bin/env bash
# Regenerates internal/config/kafka_keys_gen.go from Apache Kafka's own ConfigDefs, then the
# key table in docs/configuration.md. Needs a JDK (17+) and Maven; the jars land in ~/.m2.
# Usage (from anywhere): tools/configgen/run.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
version="4.1.1"
if [[ -f "$root/KAFKA_VERSION" ]]; then
  version="$(tr -d '[:space:]' < "$root/KAFKA_VERSION")"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

mvn -q -B -Dstyle.color=never -f "$here/pom.xml" -Dkafka.version="$version" \
  dependency:build-classpath -Dmdep.outputFile="$work/classpath.txt"
cp="$(cat "$work/classpath.txt")"
javac -cp "$cp" -d "$work" "$here/ConfigGen.java"
java -cp "$cp:$work" ConfigGen "$version" > "$work/kafka_keys_gen.go" 2> "$work/java.log" || {
  cat "$work/java.log" >&2
  exit 1
}
gofmt "$work/kafka_keys_gen.go" > "$root/internal/config/kafka_keys_gen.go"
cd "$root"
go run ./tools/configgen/docgen -doc docs/configuration.md
echo "generated from Apache Kafka $version"
