package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// checkFormat runs every pod's init container command line (sluice storage format) with
// the real binary, twice, its paths moved under a scratch directory (/etc/sluice holds
// the chart's server.properties, /var/lib/sluice is the pod's volume): the first run
// must write meta.properties with the pod's node id and the chart's cluster id, the
// second (a restarted pod) must leave it as it was. It also checks that the server's
// command line uses only flags `sluice server` has.
func checkFormat(r *report, objs *rendered, w want) {
	help, err := exec.Command(w.sluice, "server", "--help").CombinedOutput()
	r.check(err == nil, "%s server --help runs%s", w.sluice, failure(err, help))
	for _, s := range objs.statefulSets {
		for _, pd := range podsOf(&report{}, objs, w, poolOf(w, s.Name), s) {
			for _, a := range pd.server.args[2:] {
				flag, _, _ := strings.Cut(a, "=")
				r.check(!strings.HasPrefix(flag, "--") || bytes.Contains(help, []byte(flag+" ")), "%s: sluice server has the flag %s", pd.name, flag)
			}
			formatPod(r, objs, w, pd)
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

func formatPod(r *report, objs *rendered, w want, pd pod) {
	dir, err := os.MkdirTemp(w.work, pd.name+"-")
	if !r.check(err == nil, "%s: scratch directory%s", pd.name, failure(err, nil)) {
		return
	}
	defer os.RemoveAll(dir)
	etc, data := filepath.Join(dir, "etc"), filepath.Join(dir, "data")
	props, _ := objs.configMapKey(pd.template.Spec.Volumes[0].ConfigMap.Name, "server.properties")
	if err := os.MkdirAll(etc, 0o755); err == nil {
		err = os.WriteFile(filepath.Join(etc, "server.properties"), []byte(props), 0o644)
	}
	move := strings.NewReplacer("/etc/sluice", etc, "/var/lib/sluice", data)
	var args []string
	for _, a := range pd.init.args[1:] {
		args = append(args, move.Replace(a))
	}
	env := []string{"PATH=" + os.Getenv("PATH")}
	for _, e := range pd.init.env {
		env = append(env, e.Name+"="+move.Replace(e.Value))
	}
	meta := filepath.Join(data, "data", "meta.properties")
	var first []byte
	for run := 1; run <= 2; run++ {
		cmd := exec.Command(w.sluice, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		got, _ := os.ReadFile(meta)
		if run == 1 {
			first = got
			id, _ := pd.init.value("CLUSTER_ID")
			r.check(err == nil && bytes.Contains(got, []byte(fmt.Sprintf("node.id=%d\n", pd.ordinal))) && bytes.Contains(got, []byte("cluster.id="+id+"\n")),
				"%s: sluice %s wrote meta.properties with node.id=%d cluster.id=%s%s", pd.name, strings.Join(pd.init.args[1:3], " "), pd.ordinal, id, failure(err, out))
			continue
		}
		r.check(err == nil && bytes.Equal(got, first), "%s: the init container run again (a restarted pod) keeps meta.properties%s", pd.name, failure(err, out))
	}
}

// failure is ": err: output" for a failed command, nothing for one that succeeded.
func failure(err error, out []byte) string {
	if err == nil {
		return ""
	}
	return fmt.Sprintf(": %v: %s", err, bytes.TrimSpace(out))
}
