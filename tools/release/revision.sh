#!/bin/sh
# Prints the git revision make stamps into binaries: HEAD's first 12 hex
# digits, with "-dirty" when tracked files differ from HEAD (a build of
# uncommitted changes says so), or "unknown" outside a git checkout.
rev=$(git rev-parse --short=12 HEAD 2>/dev/null) || { echo unknown; exit 0; }
git diff --quiet HEAD -- 2>/dev/null || rev="$rev-dirty"
echo "$rev"
