// Command check reads the output of `helm template` for the sluice chart, decodes every
// manifest strictly into Kubernetes' API types and checks what a Sluice cluster needs of
// them: the pools' StatefulSets, the headless and client Services, the disruption
// budgets, probes, volumes, a non-root user, distinct node ids and one voter set. With
// -sluice it also checks the pods' command lines against that binary's flags. It prints
// every check and exits 1 if any failed.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// poolWant is a pool the render must hold: -pool name:component:replicas:firstNodeID.
type poolWant struct {
	sts, component  string
	replicas, start int32
}

func (p poolWant) broker() bool     { return p.component != "controller" }
func (p poolWant) controller() bool { return p.component != "broker" }

func (p poolWant) roles() string {
	switch p.component {
	case "broker":
		return "broker"
	case "controller":
		return "controller"
	}
	return "broker,controller"
}

type poolFlags []poolWant

func (f *poolFlags) String() string { return fmt.Sprint(*f) }

func (f *poolFlags) Set(s string) error {
	parts := strings.Split(s, ":")
	if len(parts) != 4 {
		return fmt.Errorf("want name:component:replicas:firstNodeID, got %q", s)
	}
	replicas, err1 := strconv.Atoi(parts[2])
	start, err2 := strconv.Atoi(parts[3])
	if err1 != nil || err2 != nil || !strings.Contains("combined controller broker", parts[1]) {
		return fmt.Errorf("bad pool %q", s)
	}
	*f = append(*f, poolWant{sts: parts[0], component: parts[1], replicas: int32(replicas), start: int32(start)})
	return nil
}

// want is what the render must say.
type want struct {
	pools                 poolFlags
	namespace, domain     string
	headless, client      string
	clientPort, ctrlPort  int32
	metricsPort           int32
	storage, sluice, plan string
}

// report prints each check as it is made and remembers the failures.
type report struct {
	checks   int
	failures []string
}

func (r *report) check(ok bool, format string, args ...any) bool {
	r.checks++
	msg := fmt.Sprintf(format, args...)
	if !ok {
		r.failures = append(r.failures, msg)
		fmt.Println("FAIL", msg)
		return false
	}
	fmt.Println("ok  ", msg)
	return true
}

func main() {
	var w want
	flag.Var(&w.pools, "pool", "a pool the render must hold, name:component:replicas:firstNodeID (repeatable)")
	flag.StringVar(&w.namespace, "namespace", "default", "the release namespace")
	flag.StringVar(&w.domain, "domain", "cluster.local", "the cluster DNS domain")
	flag.StringVar(&w.headless, "headless", "", "the headless Service's name")
	flag.StringVar(&w.client, "client", "", "the client Service's name")
	flag.StringVar(&w.storage, "storage", "10Gi", "each pod's volume size")
	flag.StringVar(&w.sluice, "sluice", "", "a sluice binary whose server flags the pods' command lines must use")
	flag.StringVar(&w.plan, "plan", "", "write each pod's command lines and environment under this directory (test/helm/cluster runs them)")
	cp, kp, mp := flag.Int("client-port", 9092, ""), flag.Int("controller-port", 9093, ""), flag.Int("metrics-port", 9644, "")
	flag.Parse()
	w.clientPort, w.ctrlPort, w.metricsPort = int32(*cp), int32(*kp), int32(*mp)
	if flag.NArg() != 1 || len(w.pools) == 0 || w.headless == "" || w.client == "" {
		fmt.Fprintln(os.Stderr, "usage: check -pool name:component:replicas:start... -headless NAME -client NAME rendered.yaml")
		os.Exit(2)
	}
	data, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var r report
	objs, err := decodeAll(data)
	if !r.check(err == nil, "every manifest decodes strictly into its Kubernetes API type%s", failure(err, nil)) {
		os.Exit(1)
	}
	for _, k := range objs.kinds {
		fmt.Println("     decoded", k)
	}
	checkCluster(&r, objs, w)
	if w.sluice != "" {
		checkFlags(&r, objs, w)
	}
	if w.plan != "" {
		r.check(writePlans(objs, w, w.plan) == nil, "pods' plans written to %s", w.plan)
	}
	if len(r.failures) > 0 {
		fmt.Printf("%d of %d checks failed:\n  %s\n", len(r.failures), r.checks, strings.Join(r.failures, "\n  "))
		os.Exit(1)
	}
	fmt.Printf("all %d checks passed\n", r.checks)
}
