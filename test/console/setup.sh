#!/usr/bin/env bash
# Installs Debian's chromium when no Chromium is on PATH, so a fresh machine
# (CI's first run) can run the console's browser tests; says how long it took.
set -euo pipefail
for name in chromium chromium-browser google-chrome; do
  if command -v "$name" >/dev/null 2>&1; then
    echo "console setup: $("$name" --version 2>/dev/null | head -n1)"
    exit 0
  fi
done
command -v apt-get >/dev/null 2>&1 || { echo "console setup: no chromium and no apt-get to install it" >&2; exit 1; }
started=$SECONDS
echo "console setup: installing chromium"
DEBIAN_FRONTEND=noninteractive apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
command -v chromium >/dev/null 2>&1 || { echo "console setup: chromium still missing after the install" >&2; exit 1; }
echo "console setup: $(chromium --version 2>/dev/null | head -n1) installed in $((SECONDS - started))s"
