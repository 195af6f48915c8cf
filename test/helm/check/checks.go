package main

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

// checkCluster checks the render against the wanted pools.
func checkCluster(r *report, objs *rendered, w want) {
	var names []string
	for _, s := range objs.statefulSets {
		names = append(names, s.Name)
	}
	var wantNames []string
	for _, p := range w.pools {
		wantNames = append(wantNames, p.sts)
	}
	slices.Sort(names)
	slices.Sort(wantNames)
	r.check(slices.Equal(names, wantNames), "StatefulSets %v, want %v", names, wantNames)
	checkHeadless(r, objs, w)
	var clusterIDs []string
	for _, cm := range objs.configMaps {
		if id, ok := cm.Data["cluster.id"]; ok {
			clusterIDs = append(clusterIDs, id)
		}
	}
	r.check(len(clusterIDs) == 1 && validUUID(clusterIDs[0]), "one cluster id, a Kafka UUID: %v", clusterIDs)
	var pods []pod
	for _, p := range w.pools {
		sts := findSTS(objs, p.sts)
		if !r.check(sts != nil, "%s: StatefulSet rendered", p.sts) {
			continue
		}
		checkStatefulSet(r, objs, w, p, sts)
		checkPDB(r, objs, p, sts)
		pods = append(pods, podsOf(r, objs, w, p, sts)...)
	}
	checkPods(r, w, pods)
	checkClientService(r, objs, w)
	checkProperties(r, objs, w)
}

func findSTS(objs *rendered, name string) *appsv1.StatefulSet {
	for _, s := range objs.statefulSets {
		if s.Name == name {
			return s
		}
	}
	return nil
}

func checkHeadless(r *report, objs *rendered, w want) {
	svc := objs.services[w.headless]
	if !r.check(svc != nil, "headless Service %s rendered", w.headless) {
		return
	}
	r.check(svc.Spec.ClusterIP == corev1.ClusterIPNone, "%s: clusterIP None (headless)%s", svc.Name, unless(svc.Spec.ClusterIP == corev1.ClusterIPNone, svc.Spec.ClusterIP))
	r.check(svc.Spec.PublishNotReadyAddresses, "%s: publishNotReadyAddresses (voters resolve each other before the quorum, hence readiness, exists)", svc.Name)
	for _, p := range w.pools {
		if sts := findSTS(objs, p.sts); sts != nil {
			r.check(selects(svc.Spec.Selector, sts.Spec.Template.Labels), "%s selects the pods of %s", svc.Name, p.sts)
		}
	}
}

func checkClientService(r *report, objs *rendered, w want) {
	svc := objs.services[w.client]
	if !r.check(svc != nil, "client Service %s rendered", w.client) {
		return
	}
	r.check(svc.Spec.ClusterIP != corev1.ClusterIPNone, "%s: not headless", svc.Name)
	r.check(len(svc.Spec.Ports) == 1 && svc.Spec.Ports[0].Port == w.clientPort && svc.Spec.Ports[0].TargetPort.StrVal == "client",
		"%s: port %d to the pods' client port", svc.Name, w.clientPort)
	for _, p := range w.pools {
		if sts := findSTS(objs, p.sts); sts != nil {
			r.check(selects(svc.Spec.Selector, sts.Spec.Template.Labels) == p.broker(),
				"%s selects %s's pods: %v (brokers only)", svc.Name, p.sts, p.broker())
		}
	}
}

func selects(selector, podLabels map[string]string) bool {
	return len(selector) > 0 && labels.SelectorFromSet(selector).Matches(labels.Set(podLabels))
}

func checkStatefulSet(r *report, objs *rendered, w want, p poolWant, sts *appsv1.StatefulSet) {
	spec := sts.Spec
	r.check(spec.Replicas != nil && *spec.Replicas == p.replicas, "%s: replicas %d", sts.Name, p.replicas)
	start := int32(0)
	if spec.Ordinals != nil {
		start = spec.Ordinals.Start
	}
	r.check(start == p.start, "%s: ordinals start at %d (the pool's first node id)%s", sts.Name, start, unless(start == p.start, p.start))
	r.check(spec.ServiceName == w.headless, "%s: serviceName %s (the headless Service)", sts.Name, w.headless)
	r.check(spec.PodManagementPolicy == appsv1.ParallelPodManagement, "%s: podManagementPolicy %s%s", sts.Name, spec.PodManagementPolicy,
		unless(spec.PodManagementPolicy == appsv1.ParallelPodManagement, appsv1.ParallelPodManagement))
	ru := spec.UpdateStrategy.RollingUpdate
	r.check(spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType &&
		(ru == nil || ((ru.Partition == nil || *ru.Partition == 0) && ru.MaxUnavailable == nil)),
		"%s: updateStrategy RollingUpdate, one pod at a time, no partition", sts.Name)
	sel, err := metav1.LabelSelectorAsSelector(spec.Selector)
	r.check(err == nil && !sel.Empty() && sel.Matches(labels.Set(spec.Template.Labels)), "%s: selector matches the pod template's labels", sts.Name)
	r.check(validLabels(spec.Template.Labels) && validLabels(sts.Labels), "%s: label keys and values valid", sts.Name)
	last := fmt.Sprintf("%s-%d", sts.Name, p.start+p.replicas-1)
	r.check(len(validation.IsDNS1123Label(last)) == 0 && len(sts.Name)+11 <= validation.LabelValueMaxLength,
		"%s: pod hostname %s a DNS label, revision hash label fits", sts.Name, last)
	checkSecurity(r, sts)
	checkVolumes(r, objs, w, sts)
	c := container(sts.Spec.Template.Spec.Containers, "sluice")
	if !r.check(c != nil, "%s: a container named sluice", sts.Name) {
		return
	}
	checkPorts(r, w, p, sts.Name, c)
	checkProbe(r, w, sts.Name, "readiness", c.ReadinessProbe, "/readyz", c)
	checkProbe(r, w, sts.Name, "liveness", c.LivenessProbe, "/healthz", c)
	checkProbe(r, w, sts.Name, "startup", c.StartupProbe, "/healthz", c)
}

func container(cs []corev1.Container, name string) *corev1.Container {
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	return nil
}

func validLabels(m map[string]string) bool {
	for k, v := range m {
		if len(validation.IsQualifiedName(k)) > 0 || len(validation.IsValidLabelValue(v)) > 0 {
			return false
		}
	}
	return true
}

func checkSecurity(r *report, sts *appsv1.StatefulSet) {
	ps := sts.Spec.Template.Spec.SecurityContext
	r.check(ps != nil && ps.RunAsNonRoot != nil && *ps.RunAsNonRoot && ps.RunAsUser != nil && *ps.RunAsUser == 65532 && ps.FSGroup != nil,
		"%s: pod runs as non-root user 65532 with an fsGroup for its volume", sts.Name)
	for _, c := range allContainers(sts) {
		sc := c.SecurityContext
		r.check(sc != nil && sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation &&
			(sc.RunAsUser == nil || *sc.RunAsUser != 0) && sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem,
			"%s/%s: no privilege escalation, not root, read-only root file system", sts.Name, c.Name)
	}
}

func allContainers(sts *appsv1.StatefulSet) []corev1.Container {
	return append(slices.Clone(sts.Spec.Template.Spec.InitContainers), sts.Spec.Template.Spec.Containers...)
}

func checkVolumes(r *report, objs *rendered, w want, sts *appsv1.StatefulSet) {
	vols := map[string]corev1.Volume{}
	for _, v := range sts.Spec.Template.Spec.Volumes {
		vols[v.Name] = v
		if v.ConfigMap != nil {
			r.check(objs.configMaps[v.ConfigMap.Name] != nil, "%s: volume %s's ConfigMap %s rendered", sts.Name, v.Name, v.ConfigMap.Name)
		}
	}
	var claim *corev1.PersistentVolumeClaim
	for i := range sts.Spec.VolumeClaimTemplates {
		if t := &sts.Spec.VolumeClaimTemplates[i]; t.Name == "data" {
			claim = t
		}
	}
	if r.check(claim != nil, "%s: a volumeClaimTemplate data (a volume per pod)", sts.Name) {
		size := claim.Spec.Resources.Requests[corev1.ResourceStorage]
		ok := size.Cmp(resource.MustParse(w.storage)) == 0 && slices.Equal(claim.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce})
		r.check(ok, "%s: data claims %s %v%s", sts.Name, size.String(), claim.Spec.AccessModes, unless(ok, w.storage+" [ReadWriteOnce]"))
		_, shadowed := vols["data"]
		r.check(!shadowed, "%s: no pod volume shadows the data claim", sts.Name)
	}
	for _, c := range allContainers(sts) {
		dataAt := ""
		for _, m := range c.VolumeMounts {
			_, ok := vols[m.Name]
			r.check(ok || (claim != nil && m.Name == claim.Name), "%s/%s: mount %s names a volume or claim", sts.Name, c.Name, m.Name)
			if m.Name == "data" {
				dataAt = m.MountPath
			}
		}
		r.check(dataAt == "/var/lib/sluice", "%s/%s: data mounted at /var/lib/sluice, got %q", sts.Name, c.Name, dataAt)
		for _, e := range c.Env {
			r.check(len(validation.IsEnvVarName(e.Name)) == 0, "%s/%s: env %s a valid name", sts.Name, c.Name, e.Name)
			if ref := e.ValueFrom; ref != nil && ref.ConfigMapKeyRef != nil {
				_, ok := objs.configMapKey(ref.ConfigMapKeyRef.Name, ref.ConfigMapKeyRef.Key)
				r.check(ok, "%s/%s: env %s's ConfigMap key %s/%s rendered", sts.Name, c.Name, e.Name, ref.ConfigMapKeyRef.Name, ref.ConfigMapKeyRef.Key)
			}
		}
	}
}

func checkPorts(r *report, w want, p poolWant, sts string, c *corev1.Container) {
	ports := map[string]int32{}
	for _, cp := range c.Ports {
		r.check(len(validation.IsValidPortName(cp.Name)) == 0, "%s: port name %s valid", sts, cp.Name)
		ports[cp.Name] = cp.ContainerPort
	}
	_, hasClient := ports["client"]
	_, hasCtrl := ports["controller"]
	r.check(hasClient == p.broker() && (!hasClient || ports["client"] == w.clientPort), "%s: client port %d exactly when a broker", sts, w.clientPort)
	r.check(hasCtrl == p.controller() && (!hasCtrl || ports["controller"] == w.ctrlPort), "%s: controller port %d exactly when a controller", sts, w.ctrlPort)
	r.check(ports["metrics"] == w.metricsPort, "%s: metrics port %d", sts, w.metricsPort)
}

// checkProbe checks an HTTP probe's path and that its port is the container's metrics
// port, the one sluice.metrics.listener binds (checked per pod).
func checkProbe(r *report, w want, sts, kind string, pr *corev1.Probe, path string, c *corev1.Container) {
	if !r.check(pr != nil && pr.HTTPGet != nil, "%s: %s probe is an HTTP GET", sts, kind) {
		return
	}
	port := pr.HTTPGet.Port.IntVal
	if name := pr.HTTPGet.Port.StrVal; name != "" {
		port = 0
		for _, cp := range c.Ports {
			if cp.Name == name {
				port = cp.ContainerPort
			}
		}
	}
	ok := pr.HTTPGet.Path == path && port == w.metricsPort
	r.check(ok, "%s: %s probe GET %s on port %d (the metrics listener)%s", sts, kind, pr.HTTPGet.Path, port, unless(ok, fmt.Sprint(path, " on ", w.metricsPort)))
}

func checkPDB(r *report, objs *rendered, p poolWant, sts *appsv1.StatefulSet) {
	var found int
	for _, pdb := range objs.pdbs {
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(sts.Spec.Template.Labels)) {
			continue
		}
		found++
		mu := pdb.Spec.MaxUnavailable
		r.check(mu != nil && mu.IntValue() == 1 && pdb.Spec.MinAvailable == nil, "%s: PodDisruptionBudget %s maxUnavailable 1", sts.Name, pdb.Name)
		for _, other := range objs.statefulSets {
			if other != sts {
				r.check(!sel.Matches(labels.Set(other.Spec.Template.Labels)), "%s: PodDisruptionBudget %s leaves %s's pods alone", sts.Name, pdb.Name, other.Name)
			}
		}
	}
	r.check(found == 1, "%s: exactly one PodDisruptionBudget selects its pods, found %d", sts.Name, found)
}

func checkProperties(r *report, objs *rendered, w want) {
	var props string
	for _, cm := range objs.configMaps {
		if s, ok := cm.Data["server.properties"]; ok {
			props = s
		}
	}
	brokers := int32(0)
	for _, p := range w.pools {
		if p.broker() {
			brokers += p.replicas
		}
	}
	rf := min(brokers, 3)
	isr := int32(1)
	if rf >= 3 {
		isr = 2
	}
	for _, kv := range []string{fmt.Sprintf("default.replication.factor=%d", rf), fmt.Sprintf("min.insync.replicas=%d", isr),
		fmt.Sprintf("offsets.topic.replication.factor=%d", rf)} {
		r.check(slices.Contains(strings.Split(props, "\n"), kv), "server.properties: %s for %d brokers", kv, brokers)
	}
}
