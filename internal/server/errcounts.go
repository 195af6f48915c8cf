package server

import (
	"reflect"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Error codes counted one by one: Kafka's -1 (UNKNOWN_SERVER_ERROR) up to
// errorSlots-2. A code outside is counted as -1, as Kafka's Errors.forCode
// maps an unknown code to UNKNOWN_SERVER_ERROR.
const errorSlots = 160

func errorSlot(code int16) int {
	if code < -1 || int(code) > errorSlots-2 {
		return 0
	}
	return int(code) + 1
}

// errorName is the Errors enum name of the code in slot i: kerr's message
// is Kafka 4.4's name but for NONE and code 6, which Kafka renamed.
func errorName(slot int) string {
	code := int16(slot - 1)
	switch code {
	case 0:
		return "NONE"
	case 6:
		return "NOT_LEADER_OR_FOLLOWER"
	}
	if err, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
		return err.Message
	}
	return "UNKNOWN_SERVER_ERROR"
}

// countRule is where Kafka 4.4's errorCounts of a response differs from
// counting every ErrorCode field of its data (read from its bytecode).
type countRule struct {
	// skipTop: the top-level code is never counted.
	skipTop bool
	// unlessEmpty: the top-level code is counted only while this top-level
	// slice is empty (the batched answers of newer versions replace it).
	unlessEmpty string
	// skipField: the codes under fields of this name are not counted.
	skipField string
}

func ruleFor(resp kmsg.Response) countRule {
	switch resp.(type) {
	case *kmsg.MetadataResponse, *kmsg.DescribeUserSCRAMCredentialsResponse:
		return countRule{skipTop: true}
	case *kmsg.OffsetFetchResponse:
		return countRule{unlessEmpty: "Groups"}
	case *kmsg.FindCoordinatorResponse:
		return countRule{unlessEmpty: "Coordinators"}
	case *kmsg.AddPartitionsToTxnResponse:
		return countRule{unlessEmpty: "Topics"}
	case *kmsg.DeleteACLsResponse:
		return countRule{skipField: "MatchingACLs"}
	}
	return countRule{}
}

// errorPlan is where the counted ErrorCode fields of one kmsg response type
// lie, worked out once by reflection. A response's walk then reads those
// fields by offset: reflect.Value's Index and Field cost about 30 ns a
// partition, the offsets a few (BenchmarkErrorCounts).
type errorPlan struct {
	typ  reflect.Type
	root *structPlan
}

// structPlan is one struct type's part of a plan.
type structPlan struct {
	// codes are the offsets of its counted int16 ErrorCode fields.
	codes []uintptr
	// children are the struct, pointer and slice fields holding codes.
	children []childPlan
	// unlessEmpty, when set, is the offset of the slice whose entries
	// replace the codes when it has any (countRule.unlessEmpty).
	unlessEmpty    uintptr
	hasUnlessEmpty bool
}

type childPlan struct {
	offset uintptr
	kind   reflect.Kind // reflect.Struct, reflect.Pointer or reflect.Slice
	// elemSize is a slice element's size.
	elemSize uintptr
	plan     *structPlan
}

// sliceHeader is the layout of any Go slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// maxPlanDepth bounds the type walk; kmsg's responses nest four deep.
const maxPlanDepth = 8

func newErrorPlan(resp kmsg.Response) *errorPlan {
	t := reflect.TypeOf(resp)
	rule := ruleFor(resp)
	root := planStruct(t.Elem(), rule.skipField, 0)
	if root != nil {
		if rule.skipTop {
			root.codes = nil
		}
		if f, ok := t.Elem().FieldByName(rule.unlessEmpty); ok && rule.unlessEmpty != "" && f.Type.Kind() == reflect.Slice {
			root.unlessEmpty, root.hasUnlessEmpty = f.Offset, true
		}
	}
	return &errorPlan{typ: t, root: root}
}

// planStruct returns t's plan, or nil when no field of t holds a code.
func planStruct(t reflect.Type, skipField string, depth int) *structPlan {
	if t.Kind() != reflect.Struct || depth > maxPlanDepth {
		return nil
	}
	p := &structPlan{}
	for i := range t.NumField() {
		f := t.Field(i)
		kind := f.Type.Kind()
		switch {
		case f.Name == skipField:
		case f.Name == "ErrorCode" && kind == reflect.Int16:
			p.codes = append(p.codes, f.Offset)
		case kind == reflect.Struct:
			if sub := planStruct(f.Type, skipField, depth+1); sub != nil {
				p.children = append(p.children, childPlan{offset: f.Offset, kind: kind, plan: sub})
			}
		case kind == reflect.Pointer || kind == reflect.Slice:
			if sub := planStruct(f.Type.Elem(), skipField, depth+1); sub != nil {
				p.children = append(p.children, childPlan{offset: f.Offset, kind: kind, elemSize: f.Type.Elem().Size(), plan: sub})
			}
		}
	}
	if len(p.codes) == 0 && len(p.children) == 0 {
		return nil
	}
	return p
}

// count walks resp (of the plan's type) into a's error counters.
func (p *errorPlan) count(resp kmsg.Response, a *apiMetrics) {
	if p.root == nil {
		return
	}
	t := tally{a: a}
	p.root.walk(reflect.ValueOf(resp).UnsafePointer(), &t)
	t.flush()
}

func (p *structPlan) walk(base unsafe.Pointer, t *tally) {
	if !p.hasUnlessEmpty || (*sliceHeader)(unsafe.Add(base, p.unlessEmpty)).len == 0 {
		for _, off := range p.codes {
			t.add(*(*int16)(unsafe.Add(base, off)))
		}
	}
	for _, c := range p.children {
		field := unsafe.Add(base, c.offset)
		switch c.kind {
		case reflect.Struct:
			c.plan.walk(field, t)
		case reflect.Pointer:
			if elem := *(*unsafe.Pointer)(field); elem != nil {
				c.plan.walk(elem, t)
			}
		case reflect.Slice:
			s := (*sliceHeader)(field)
			for j := range s.len {
				c.plan.walk(unsafe.Add(s.data, uintptr(j)*c.elemSize), t)
			}
		}
	}
}

// tally counts runs of one code before touching the shared counters: most
// responses are all NONE, so one atomic add covers them.
type tally struct {
	a    *apiMetrics
	code int16
	n    int
}

func (t *tally) add(code int16) {
	if t.n > 0 && code != t.code {
		t.flush()
	}
	t.code = code
	t.n++
}

func (t *tally) flush() {
	if t.n > 0 {
		t.a.countError(t.code, t.n)
		t.n = 0
	}
}
