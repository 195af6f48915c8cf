#!/usr/bin/env bash
# The decommission fault test at a larger size: TestBalanceDecommissionKill
# (test/integration/balance_test.go) with SLUICE_BALANCE_SCALE (default 10: broker 4's
# partitions hold about 120 MiB to move instead of 12) so the active controller is
# killed (SIGKILL) well inside the moves; the rerun must complete and every acknowledged
# record must be readable. Run by hand:
#   flock /tmp/eco-heavy.lock test/ops/balance_kill.sh [SCALE]
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"
SLUICE_BALANCE_SCALE="${1:-10}" go test -count=1 -timeout 30m -run 'TestBalanceDecommissionKill$' -v ./test/integration/ 2>&1 |
  grep -v '^        time='
