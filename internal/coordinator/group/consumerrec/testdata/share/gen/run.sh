#!/usr/bin/env bash
# Regenerates consumerrec's share group golden records with Kafka's own
# classes: compiles GenShareRecords.java against the pinned Kafka
# (bench/kafka-ref classpath plus the group coordinator jar) and writes
# testdata/share/*.golden. Needs a JDK 17+.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(git -C "$here" rev-parse --show-toplevel)
version=${KAFKA_REF_VERSION:-$(tr -d "[:space:]" < "$root/KAFKA_VERSION")}
gc="${HOME}/.m2/repository/org/apache/kafka/kafka-group-coordinator/${version}/kafka-group-coordinator-${version}.jar"
cp="$("$root/bench/kafka-ref" classpath):$gc"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
javac -d "$out" -cp "$cp" "$here/GenShareRecords.java"
java -cp "$out:$cp" GenShareRecords "$here/.."
