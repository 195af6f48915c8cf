package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
)

// rendered holds the objects of one `helm template` output by kind.
type rendered struct {
	statefulSets []*appsv1.StatefulSet
	services     map[string]*corev1.Service
	pdbs         []*policyv1.PodDisruptionBudget
	configMaps   map[string]*corev1.ConfigMap
	kinds        []string // every document's kind/name, in order
}

// decodeAll splits a multi-document YAML stream and decodes every document into its
// Kubernetes API type with apimachinery's strict serializer: an unknown or duplicated
// field, a wrong type or an unregistered kind is an error.
func decodeAll(data []byte) (*rendered, error) {
	strict := json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme.Scheme, scheme.Scheme,
		json.SerializerOptions{Yaml: true, Strict: true})
	r := &rendered{services: map[string]*corev1.Service{}, configMaps: map[string]*corev1.ConfigMap{}}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var errs []error
	for n := 1; ; n++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", n, err)
		}
		if blank(doc) {
			continue
		}
		obj, gvk, err := strict.Decode(doc, nil, nil)
		if err != nil {
			errs = append(errs, fmt.Errorf("document %d (%s): %w", n, source(doc), err))
			continue
		}
		if err := r.add(obj); err != nil {
			errs = append(errs, fmt.Errorf("document %d (%s): %w", n, source(doc), err))
			continue
		}
		r.kinds = append(r.kinds, gvk.GroupVersion().String()+" "+gvk.Kind+" "+name(obj))
	}
	return r, errors.Join(errs...)
}

func (r *rendered) add(obj runtime.Object) error {
	switch o := obj.(type) {
	case *appsv1.StatefulSet:
		r.statefulSets = append(r.statefulSets, o)
	case *corev1.Service:
		r.services[o.Name] = o
	case *policyv1.PodDisruptionBudget:
		r.pdbs = append(r.pdbs, o)
	case *corev1.ConfigMap:
		r.configMaps[o.Name] = o
	default:
		return fmt.Errorf("unexpected kind %T in the chart", obj)
	}
	return nil
}

// configMapKey is a rendered ConfigMap's value for key.
func (r *rendered) configMapKey(name, key string) (string, bool) {
	cm := r.configMaps[name]
	if cm == nil {
		return "", false
	}
	v, ok := cm.Data[key]
	return v, ok
}

func name(obj runtime.Object) string {
	if o, ok := obj.(interface{ GetName() string }); ok {
		return o.GetName()
	}
	return "?"
}

// blank reports a document holding only comments and white space.
func blank(doc []byte) bool {
	for _, line := range strings.Split(string(doc), "\n") {
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") && t != "---" {
			return false
		}
	}
	return true
}

// source is the "# Source:" comment helm writes above each document.
func source(doc []byte) string {
	for _, line := range strings.Split(string(doc), "\n") {
		if s, ok := strings.CutPrefix(strings.TrimSpace(line), "# Source: "); ok {
			return s
		}
	}
	return "no source comment"
}
