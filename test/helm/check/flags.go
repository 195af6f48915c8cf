package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
)

// checkFlags checks that every pod's command line uses only flags `sluice server` has.
func checkFlags(r *report, objs *rendered, w want) {
	help, err := exec.Command(w.sluice, "server", "--help").CombinedOutput()
	r.check(err == nil, "%s server --help runs%s", w.sluice, failure(err, help))
	for _, s := range objs.statefulSets {
		for _, pd := range podsOf(&report{}, objs, w, poolOf(w, s.Name), s) {
			for _, a := range pd.server.args[2:] {
				flag, _, _ := strings.Cut(a, "=")
				r.check(!strings.HasPrefix(flag, "--") || bytes.Contains(help, []byte(flag+" ")), "%s: sluice server has the flag %s", pd.name, flag)
			}
		}
	}
}

func poolOf(w want, sts string) poolWant {
	for _, p := range w.pools {
		if p.sts == sts {
			return p
		}
	}
	return poolWant{}
}

// failure is ": err: output" for a failed command, nothing for one that succeeded.
func failure(err error, out []byte) string {
	if err == nil {
		return ""
	}
	return fmt.Sprintf(": %v: %s", err, bytes.TrimSpace(out))
}
