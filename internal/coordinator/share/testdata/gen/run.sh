#!/usr/bin/env bash
# Regenerates coordinator/share's golden files with Kafka's own classes:
# compiles GenShare.java against the pinned Kafka (bench/kafka-ref's
# classpath, which holds the share coordinator jar) and writes
# testdata/{records,keys,combine}.golden. Needs a JDK 17+.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(git -C "$here" rev-parse --show-toplevel)
cp="$("$root/bench/kafka-ref" classpath)"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
javac -d "$out" -cp "$cp" "$here/GenShare.java"
java -cp "$out:$cp" GenShare "$here/.."
