# Helpers shared by the single-node Streams scenarios (streams_windowed_test.sh,
# streams_join_test.sh); source after test/interop/sluice_lib.sh and sluice_init.
#   streams_app NAME MODE APP_ID ARGS...  starts App in the background (output in
#                                         $work/NAME.txt), sets app_pid, waits for RUNNING
#   streams_app_term                      SIGTERM, waits for "closed true in state NOT_RUNNING"
#   iq PATH                               GET http://127.0.0.1:$iq_port/PATH, the body to
#                                         stdout; fails unless 200 (404 prints "404")
#   iq_until PATH FILE SECONDS            polls until the sorted answer equals FILE (sorted)
eco_streams="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
app_pid=""
app_out=""

streams_app() {
  local name="$1" mode="$2" app_id="$3" deadline=$((SECONDS + 90))
  shift 3
  app_out="$work/$name.txt"
  "$eco_streams/run" "$mode" "$SLUICE_BOOTSTRAP" "$app_id" "$@" > "$app_out" 2>&1 &
  app_pid=$!
  until grep -qx RUNNING "$app_out"; do
    kill -0 "$app_pid" 2>/dev/null || { tail -n 30 "$app_out"; fail "$name exited before RUNNING"; }
    ((SECONDS < deadline)) || { tail -n 30 "$app_out"; fail "$name not RUNNING within 90 s"; }
    sleep 0.2
  done
  step "$name (pid $app_pid) RUNNING"
}

streams_app_term() {
  kill -TERM "$app_pid"
  timeout 40 tail --pid="$app_pid" -f /dev/null || fail "the app did not stop within 40 s of SIGTERM"
  app_pid=""
  grep -qx "closed true in state NOT_RUNNING" "$app_out" || { tail -n 30 "$app_out"; fail "the app did not close to NOT_RUNNING"; }
}

iq() {
  python3 - "http://127.0.0.1:$iq_port/$1" <<'PY'
import sys, urllib.request, urllib.error
try:
    with urllib.request.urlopen(sys.argv[1], timeout=10) as r:
        sys.stdout.write(r.read().decode())
except urllib.error.HTTPError as e:
    print(e.code)
    sys.exit(1)
PY
}

iq_until() {
  local path="$1" want="$2" deadline=$((SECONDS + $3))
  until iq "$path" 2>/dev/null | sort > "$work/iq.txt" && sort "$want" | cmp -s - "$work/iq.txt"; do
    if ((SECONDS >= deadline)); then
      echo "---- want (sorted) vs the store's answer to /$path" >&2
      sort "$want" | diff - "$work/iq.txt" | head -n 20 >&2
      tail -n 20 "$app_out" >&2
      fail "/$path did not answer the expected entries within $3 s"
    fi
    sleep 0.5
  done
}
