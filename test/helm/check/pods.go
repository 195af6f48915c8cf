package main

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// pod is one pod a StatefulSet will make, with its containers' command lines and
// environments resolved as the kubelet resolves them.
type pod struct {
	name     string
	ordinal  int32
	pool     poolWant
	host     string // its name under the headless Service
	server   resolved
	template *corev1.PodTemplateSpec
}

type resolved struct {
	args []string
	env  []corev1.EnvVar // values resolved, in order
}

// value is the resolved variable's value.
func (c resolved) value(name string) (string, bool) {
	for _, e := range c.env {
		if e.Name == name {
			return e.Value, true
		}
	}
	return "", false
}

// overrides are the command line's --override key=value pairs.
func (c resolved) overrides() map[string]string {
	m := map[string]string{}
	for i, a := range c.args {
		v, ok := strings.CutPrefix(a, "--override=")
		if !ok && a == "--override" && i+1 < len(c.args) {
			v, ok = c.args[i+1], true
		}
		if k, val, found := strings.Cut(v, "="); ok && found {
			m[k] = val
		}
	}
	return m
}

// keys are the configuration keys --config-env reads from the environment.
func (c resolved) keys() map[string]string {
	m := map[string]string{}
	for _, e := range c.env {
		if k, ok := envKey(e.Name); ok && e.Value != "" {
			m[k] = e.Value
		}
	}
	return m
}

// envKey is Kafka's container image's mapping, as sluice server --config-env applies it
// (internal/config/env.go): KAFKA_ dropped (SLUICE_ gives sluice.*), lower case, "_" a
// dot, "__" an underscore, "___" a dash.
func envKey(name string) (string, bool) {
	prefix := ""
	rest, ok := strings.CutPrefix(name, "KAFKA_")
	if !ok {
		if rest, ok = strings.CutPrefix(name, "SLUICE_"); !ok {
			return "", false
		}
		prefix = "sluice."
	}
	s := strings.ReplaceAll(strings.ToLower(rest), "_", ".")
	s = strings.ReplaceAll(s, "...", "-")
	return prefix + strings.ReplaceAll(s, "..", "_"), true
}

func podsOf(r *report, objs *rendered, w want, p poolWant, sts *appsv1.StatefulSet) []pod {
	var pods []pod
	for o := p.start; o < p.start+*sts.Spec.Replicas; o++ {
		pd := pod{name: fmt.Sprintf("%s-%d", sts.Name, o), ordinal: o, pool: p, template: &sts.Spec.Template}
		pd.host = fmt.Sprintf("%s.%s.%s.svc.%s", pd.name, sts.Spec.ServiceName, w.namespace, w.domain)
		if c := container(sts.Spec.Template.Spec.Containers, "sluice"); c != nil {
			pd.server = resolve(r, objs, pd, c)
		}
		pods = append(pods, pd)
	}
	return pods
}

var varRef = regexp.MustCompile(`\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// expand replaces $(NAME) by a variable defined before it, as Kubernetes does for env
// values, command and args ($$ is a literal $; an undefined reference stays as written).
func expand(s string, env []corev1.EnvVar) string {
	return varRef.ReplaceAllStringFunc(s, func(m string) string {
		if m == "$$" {
			return "$"
		}
		for _, e := range env {
			if e.Name == m[2:len(m)-1] {
				return e.Value
			}
		}
		return m
	})
}

// resolve gives a container's environment and arguments as the kubelet would for pod pd.
func resolve(r *report, objs *rendered, pd pod, c *corev1.Container) resolved {
	var out resolved
	for _, e := range c.Env {
		v := expand(e.Value, out.env)
		if f := e.ValueFrom; f != nil {
			var ok bool
			v, ok = valueFrom(objs, pd, f)
			r.check(ok, "%s/%s: env %s resolves", pd.name, c.Name, e.Name)
		}
		out.env = append(out.env, corev1.EnvVar{Name: e.Name, Value: v})
	}
	for _, a := range append(slices.Clone(c.Command), c.Args...) {
		out.args = append(out.args, expand(a, out.env))
	}
	return out
}

func valueFrom(objs *rendered, pd pod, f *corev1.EnvVarSource) (string, bool) {
	switch {
	case f.FieldRef != nil && f.FieldRef.FieldPath == "metadata.name":
		return pd.name, true
	case f.FieldRef != nil && f.FieldRef.FieldPath == "metadata.labels['"+appsv1.PodIndexLabel+"']":
		// Set by the StatefulSet controller on every pod (Kubernetes 1.28 and later).
		return strconv.Itoa(int(pd.ordinal)), true
	case f.ConfigMapKeyRef != nil:
		return objs.configMapKey(f.ConfigMapKeyRef.Name, f.ConfigMapKeyRef.Key)
	}
	return "", false
}

// checkPods checks each pod's configuration and the cluster's: distinct node ids, the
// advertised names, one voter set naming exactly the controller pods.
func checkPods(r *report, w want, pods []pod) {
	ids := map[int32]string{}
	wantVoters := []string{}
	for _, pd := range pods {
		if pd.pool.controller() {
			wantVoters = append(wantVoters, fmt.Sprintf("%d@%s:%d", pd.ordinal, pd.host, w.ctrlPort))
		}
		id := checkPod(r, w, pd)
		if other, dup := ids[id]; dup {
			r.check(false, "%s: node id %d also that of %s", pd.name, id, other)
		}
		ids[id] = pd.name
	}
	r.check(len(ids) == len(pods), "%d pods, %d distinct node ids", len(pods), len(ids))
	for _, pd := range pods {
		got := strings.Split(pd.server.keys()["controller.quorum.voters"], ",")
		ok := slices.Equal(got, wantVoters)
		r.check(ok, "%s: controller.quorum.voters names the controller pods: %s%s", pd.name, strings.Join(got, ","), unless(ok, wantVoters))
	}
}

// checkPod checks one pod and returns its node id.
func checkPod(r *report, w want, pd pod) int32 {
	srv := pd.server.overrides()
	id, err := strconv.Atoi(srv["node.id"])
	r.check(err == nil && int32(id) == pd.ordinal, "%s: node.id %s (its ordinal)", pd.name, srv["node.id"])
	var unresolved []string
	for _, s := range append(slices.Clone(pd.server.args), pd.server.values()...) {
		if strings.Contains(s, "$(") {
			unresolved = append(unresolved, s)
		}
	}
	r.check(len(unresolved) == 0, "%s: every $(VAR) in the container's args and env resolves %q", pd.name, unresolved)
	r.check(slices.Contains(pd.server.args, "--config-env") && pd.server.args[1] == "server", "%s: runs sluice server --config-env", pd.name)
	clusterID, _ := pd.server.value("CLUSTER_ID")
	r.check(validUUID(clusterID), "%s: CLUSTER_ID %s (formats an empty volume) a Kafka UUID", pd.name, clusterID)
	keys := pd.server.keys()
	r.check(keys["process.roles"] == pd.pool.roles(), "%s: process.roles %s, want %s", pd.name, keys["process.roles"], pd.pool.roles())
	wantAdv := []string{}
	if pd.pool.broker() {
		wantAdv = append(wantAdv, fmt.Sprintf("PLAINTEXT://%s:%d", pd.host, w.clientPort))
	}
	if pd.pool.controller() {
		wantAdv = append(wantAdv, fmt.Sprintf("CONTROLLER://%s:%d", pd.host, w.ctrlPort))
	}
	adv := strings.Split(keys["advertised.listeners"], ",")
	ok := slices.Equal(adv, wantAdv)
	r.check(ok, "%s: advertised.listeners its pod's name: %s%s", pd.name, strings.Join(adv, ","), unless(ok, wantAdv))
	r.check(strings.Contains(keys["listeners"], "CONTROLLER://") == pd.pool.controller() &&
		strings.Contains(keys["listeners"], fmt.Sprintf("PLAINTEXT://:%d", w.clientPort)) == pd.pool.broker(),
		"%s: listeners %s for roles %s", pd.name, keys["listeners"], pd.pool.roles())
	r.check(keys["sluice.metrics.listener"] == fmt.Sprintf(":%d", w.metricsPort), "%s: sluice.metrics.listener :%d (the probes' port), got %q",
		pd.name, w.metricsPort, keys["sluice.metrics.listener"])
	r.check(strings.HasPrefix(keys["log.dirs"], "/var/lib/sluice/"), "%s: log.dirs %s on the data volume", pd.name, keys["log.dirs"])
	return int32(id)
}

func (c resolved) values() []string {
	var out []string
	for _, e := range c.env {
		out = append(out, e.Value)
	}
	return out
}

// validUUID reports a Kafka UUID: 16 bytes in base64url without padding.
func validUUID(s string) bool {
	b, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil && len(b) == 16 && !strings.HasPrefix(s, "-")
}

// unless is ", want W" for a failed comparison, nothing for a passed one.
func unless(ok bool, want any) string {
	if ok {
		return ""
	}
	return fmt.Sprintf(", want %v", want)
}
