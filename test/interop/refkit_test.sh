#!/usr/bin/env bash
# Interop suite entry for the reference kit's smoke test (run picks up *_test.sh files).
exec "$(dirname "${BASH_SOURCE[0]}")/refkit_smoke.sh"
