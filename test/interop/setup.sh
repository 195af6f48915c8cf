#!/usr/bin/env bash
# Installs or checks what the interop suite needs, so a fresh machine (CI's first run) works:
# a JDK 17+ and Maven for the reference Kafka and the Java scenarios, Go for our own tools.
# Then warms the caches (Kafka jars in ~/.m2, the resolved classpath, the Java build) and
# says how long that took, since a cold Maven download is the slow part of a first run.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

apt_updated=0
# need_apt COMMAND PACKAGE...: installs the Debian packages when COMMAND is missing.
need_apt() {
  local cmd="$1"; shift
  command -v "$cmd" >/dev/null 2>&1 && return 0
  command -v apt-get >/dev/null 2>&1 || { echo "setup: $cmd missing and no apt-get to install $*" >&2; return 1; }
  if [[ $apt_updated -eq 0 ]]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    apt_updated=1
  fi
  echo "setup: installing $* (for $cmd)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
  command -v "$cmd" >/dev/null 2>&1 || { echo "setup: $cmd still missing after installing $*" >&2; return 1; }
}

need_apt java openjdk-17-jdk-headless
need_apt mvn maven
need_apt unzip unzip
need_apt python3 python3
need_apt kcat kcat
need_apt flock util-linux
command -v go >/dev/null 2>&1 || { echo "setup: go missing (the repository's toolchain)" >&2; exit 1; }

# kafka-python for the sluice_kafka_python test, into the python3 the tests run (pip, since
# Debian's python3-kafka lands only in the system interpreter and is the older 2.0 line).
if ! python3 -c 'import kafka' >/dev/null 2>&1; then
  echo "setup: installing kafka-python (pip)"
  python3 -m pip install -q --disable-pip-version-check "kafka-python==3.0.12" >/dev/null 2>&1 \
    || { python3 -m ensurepip -q >/dev/null 2>&1 && python3 -m pip install -q --disable-pip-version-check "kafka-python==3.0.12"; }
  python3 -c 'import kafka' || { echo "setup: kafka-python still not importable by $(command -v python3)" >&2; exit 1; }
fi
# confluent-kafka (librdkafka bundled in its wheel) for the transaction tests: kcat cannot
# produce transactionally.
if ! python3 -c 'import confluent_kafka' >/dev/null 2>&1; then
  echo "setup: installing confluent-kafka (pip)"
  python3 -m pip install -q --disable-pip-version-check "confluent-kafka==2.16.1" >/dev/null 2>&1 \
    || { python3 -m ensurepip -q >/dev/null 2>&1 && python3 -m pip install -q --disable-pip-version-check "confluent-kafka==2.16.1"; }
  python3 -c 'import confluent_kafka' || { echo "setup: confluent-kafka still not importable by $(command -v python3)" >&2; exit 1; }
fi
echo "setup: confluent-kafka $(python3 -c 'import confluent_kafka as c; print(c.__version__, "(librdkafka", c.libversion()[0] + ")")')"
echo "setup: kcat $(kcat -V 2>&1 | awk '/^Version/ { print $2 }') (librdkafka $(kcat -V 2>&1 | sed -n 's/.*librdkafka \([0-9.]*\).*/\1/p')), kafka-python $(python3 -c 'import kafka; print(kafka.__version__)')"

java_major="$(java -XshowSettings:properties -version 2>&1 | awk -F' = ' '/java.specification.version/ { print $2 }')"
[[ "${java_major%%.*}" -ge 17 ]] || { echo "setup: need Java 17+, have $java_major" >&2; exit 1; }

started=$SECONDS
"$repo/bench/kafka-ref" classpath > /dev/null
echo "setup: Kafka $("$repo/bench/kafka-ref" version) classpath ready in $((SECONDS - started))s"
started=$SECONDS
"$here/java/run" build
echo "setup: Java interop scenarios ready in $((SECONDS - started))s"
started=$SECONDS
"$here/streams/run" build
"$here/share/run" build
echo "setup: Kafka Streams WordCount and the share consumers ready in $((SECONDS - started))s"
