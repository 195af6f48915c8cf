package group

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// oddHarness adds the share offsets admin steps to the share harness.
type oddHarness struct {
	*sddHarness
	alterInit *ShareInitRequest          // the last alter's initialization
	deleting  map[string]ShareStateTopic // the last delete plan's topics by name
}

// TestShareOffsetsDataDriven runs testdata/share_offsets: the group steps
// of DescribeShareGroupOffsets, AlterShareGroupOffsets and
// DeleteShareGroupOffsets, with the share harness's commands.
func TestShareOffsetsDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata/share_offsets", func(t *testing.T, path string) {
		h := &oddHarness{sddHarness: &sddHarness{cddHarness: newCDDHarness(t)}}
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			h.out = &strings.Builder{}
			switch td.Cmd {
			case "plan":
				h.plan(td)
			case "alter":
				h.alter(td)
			case "altered":
				h.altered(td)
			case "delete-offsets":
				h.deleteOffsets(td)
			case "deleted":
				h.deleted(td)
			default:
				h.runShare(td)
			}
			if h.out.Len() == 0 {
				return "ok\n"
			}
			return h.out.String()
		})
	})
}

// plan prints what a describe reads: "all" for a group's initialized
// partitions, else input lines "topic p,p".
func (h *oddHarness) plan(td *datadriven.TestData) {
	var p ShareOffsetsPlan
	if td.HasArg("all") {
		p = h.mgr.PlanAllShareOffsets(cddStr(td, "group", "g"))
	} else {
		var topics []ShareOffsetsTopic
		for _, f := range oddLines(td) {
			t := ShareOffsetsTopic{TopicName: f[0]}
			for _, s := range strings.Split(f[1], ",") {
				t.Partitions = append(t.Partitions, int32(oddInt(h.t, s)))
			}
			topics = append(topics, t)
		}
		p = h.mgr.PlanShareOffsets(topics)
	}
	for _, t := range p.Read {
		h.printf("read %s(%s) %v\n", t.TopicName, h.topicName(t.TopicID), t.Partitions)
	}
	for _, t := range p.Missing {
		h.printf("missing %s %v\n", t.TopicName, t.Partitions)
	}
}

// alter sends an AlterShareGroupOffsets: input lines "topic partition
// offset".
func (h *oddHarness) alter(td *datadriven.TestData) {
	var topics []ShareOffsetsAlterTopic
	for _, f := range oddLines(td) {
		p := ShareOffsetsAlterPartition{Partition: int32(oddInt(h.t, f[1])), StartOffset: int64(oddInt(h.t, f[2]))}
		if n := len(topics); n > 0 && topics[n-1].TopicName == f[0] {
			topics[n-1].Partitions = append(topics[n-1].Partitions, p)
			continue
		}
		topics = append(topics, ShareOffsetsAlterTopic{TopicName: f[0], Partitions: []ShareOffsetsAlterPartition{p}})
	}
	var got *AlterShareOffsetsResult
	h.mgr.AlterShareOffsets(h.now, cddStr(td, "group", "g"), topics, func(r AlterShareOffsetsResult) { got = &r })
	h.settle()
	if got == nil {
		h.t.Fatal("alter not answered")
	}
	if got.ErrorCode != 0 {
		h.printf("error %s: %s\n", cddErrName(got.ErrorCode), cddDeref(got.ErrorMessage))
		return
	}
	for _, t := range got.Topics {
		for _, p := range t.Partitions {
			h.printf("%s(%s)/%d %s %s\n", t.TopicName, h.topicName(t.TopicID), p.Partition, cddErrName(p.ErrorCode), cddDeref(p.ErrorMessage))
		}
	}
	var parts []string
	for _, t := range got.Init.Topics {
		for _, p := range t.Partitions {
			parts = append(parts, fmt.Sprintf("%s/%d@%d", t.TopicName, p.Partition, p.StartOffset))
		}
	}
	h.printf("initialize %s state-epoch=%d %s\n", got.Init.GroupID, got.Init.StateEpoch, strings.Join(parts, " "))
	h.alterInit = &got.Init
}

// altered records the last alter's partitions as initialized, as the
// coordinator does once the share coordinator accepted them all.
func (h *oddHarness) altered(td *datadriven.TestData) {
	if h.alterInit == nil {
		td.Fatalf(h.t, "no alter pending")
	}
	var topics []ShareStateTopic
	for _, t := range h.alterInit.Topics {
		st := ShareStateTopic{TopicID: t.TopicID, TopicName: t.TopicName}
		for _, p := range t.Partitions {
			st.Partitions = append(st.Partitions, p.Partition)
		}
		topics = append(topics, st)
	}
	h.mgr.ShareStateInitialized(h.now, h.alterInit.GroupID, topics, nil)
	h.settle()
	h.alterInit = nil
}

// deleteOffsets runs DeleteShareGroupOffsets' first step for topics.
func (h *oddHarness) deleteOffsets(td *datadriven.TestData) {
	var names []string
	if s := cddStr(td, "topics", ""); s != "" {
		names = strings.Split(s, ",")
	}
	var got *ShareOffsetsDeletePlan
	h.mgr.PrepareShareOffsetsDelete(h.now, cddStr(td, "group", "g"), names, func(p ShareOffsetsDeletePlan) { got = &p })
	h.settle()
	if got == nil {
		h.t.Fatal("delete not answered")
	}
	if got.ErrorCode != 0 {
		h.printf("error %s: %s\n", cddErrName(got.ErrorCode), cddDeref(got.ErrorMessage))
		return
	}
	h.deleting = map[string]ShareStateTopic{}
	for _, t := range got.Delete {
		h.printf("delete state %s %v\n", t.TopicName, t.Partitions)
		h.deleting[t.TopicName] = t
	}
	for _, e := range got.Errors {
		h.printf("refused %s(%s) %s: %s\n", e.TopicName, h.topicName(e.TopicID), cddErrName(e.ErrorCode), cddDeref(e.ErrorMessage))
	}
}

// deleted completes the deletion of the named topics of the last plan.
func (h *oddHarness) deleted(td *datadriven.TestData) {
	var topics []ShareStateTopic
	for _, n := range strings.Split(cddStr(td, "topics", ""), ",") {
		t, ok := h.deleting[n]
		if !ok {
			td.Fatalf(h.t, "topic %q not in the last delete plan", n)
		}
		topics = append(topics, t)
	}
	var out []DeletedTopicOutcome
	code := int16(-1)
	h.mgr.CompleteShareOffsetsDelete(h.now, cddStr(td, "group", "g"), topics, func(o []DeletedTopicOutcome, c int16) { out, code = o, c })
	h.settle()
	if code != 0 {
		h.printf("error %s\n", cddErrName(code))
		return
	}
	for _, o := range out {
		h.printf("deleted %s(%s)\n", o.TopicName, h.topicName(o.TopicID))
	}
}

func oddLines(td *datadriven.TestData) [][]string {
	var out [][]string
	for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			out = append(out, f)
		}
	}
	return out
}

func oddInt(t testing.TB, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("bad number %q", s)
	}
	return n
}
