#!/usr/bin/env bash
# Installs Debian's prometheus package (prometheus and promtool) when they
# are missing, so a fresh machine can run make prometheus-test. The test
# runs the prometheus binary itself with its own config and storage; the
# package's service must not start, so the install runs under a
# policy-rc.d that refuses service starts (Debian's mechanism for that),
# unless the machine already has one.
set -euo pipefail
if command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; then
  echo "metrics setup: $(prometheus --version 2>&1 | head -n1)"
  exit 0
fi
command -v apt-get >/dev/null 2>&1 || { echo "metrics setup: no prometheus and no apt-get to install it" >&2; exit 1; }
started=$SECONDS
echo "metrics setup: installing prometheus"
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod +x "$policy"
  trap 'rm -f "$policy"' EXIT
fi
DEBIAN_FRONTEND=noninteractive apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
command -v prometheus >/dev/null 2>&1 || { echo "metrics setup: prometheus still missing after the install" >&2; exit 1; }
echo "metrics setup: $(prometheus --version 2>&1 | head -n1) installed in $((SECONDS - started))s"
