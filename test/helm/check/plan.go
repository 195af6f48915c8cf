package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// writePlans writes, for test/helm/cluster, what the kubelet would run for each pod:
// DIR/<pod>/server.{args,env} (NUL-separated, the binary's path first in args),
// DIR/<pod>/etc/server.properties (the ConfigMap's) and DIR/<pod>/host (its DNS name),
// with /etc/sluice and /var/lib/sluice moved under DIR/<pod>; DIR/pods lists the pods
// in the order of the StatefulSets and ordinals.
func writePlans(objs *rendered, w want, dir string) error {
	var names []string
	for _, s := range objs.statefulSets {
		for _, pd := range podsOf(&report{}, objs, w, poolOf(w, s.Name), s) {
			if err := writePlan(objs, filepath.Join(dir, pd.name), pd); err != nil {
				return fmt.Errorf("pod %s: %w", pd.name, err)
			}
			names = append(names, pd.name)
		}
	}
	return os.WriteFile(filepath.Join(dir, "pods"), []byte(strings.Join(names, "\n")+"\n"), 0o644)
}

func writePlan(objs *rendered, dir string, pd pod) error {
	etc, data := filepath.Join(dir, "etc"), filepath.Join(dir, "data")
	for _, d := range []string{etc, data} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	props, _ := objs.configMapKey(pd.template.Spec.Volumes[0].ConfigMap.Name, "server.properties")
	move := strings.NewReplacer("/etc/sluice", etc, "/var/lib/sluice", data)
	files := map[string]string{"etc/server.properties": props, "host": pd.host + "\n"}
	var args, env []string
	for _, a := range pd.server.args {
		args = append(args, move.Replace(a))
	}
	for _, e := range pd.server.env {
		env = append(env, e.Name+"="+move.Replace(e.Value))
	}
	files["server.args"] = strings.Join(args, "\x00") + "\x00"
	files["server.env"] = strings.Join(env, "\x00") + "\x00"
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}
