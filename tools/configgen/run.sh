#!/usr/bin/env bash
# Regenerates internal/config/kafka_keys_gen.go (and the test table of Kafka's verdicts on sample
# values, kafka_verdicts_gen_test.go) from Apache Kafka's own ConfigDefs, then the typed key
# values (keys_gen.go, tools/configgen/keygen) and the key table in docs/configuration.md.
# Needs a JDK (17+) and Maven; the jars land in ~/.m2.
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
  dependency:build-classpath -Dmdep.outputFile="$work/classpath.txt" > /dev/null
cp="$(cat "$work/classpath.txt")"
javac -cp "$cp" -d "$work" "$here/ConfigGen.java"
for mode in keys verdicts; do
  java -cp "$cp:$work" ConfigGen "$mode" "$version" > "$work/$mode.go" 2> "$work/java.log" || {
    cat "$work/java.log" >&2
    exit 1
  }
done
gofmt "$work/keys.go" > "$root/internal/config/kafka_keys_gen.go"
gofmt "$work/verdicts.go" > "$root/internal/config/kafka_verdicts_gen_test.go"
cd "$root"
go run ./tools/configgen/keygen
go run ./tools/configgen/keyuse
go run ./tools/configgen/docgen -doc docs/configuration.md
echo "generated from Apache Kafka $version"
