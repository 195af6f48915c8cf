package assignor

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/sluice-io/sluice/internal/kafka"
)

// ddHarness runs assignors from a datadriven file. Commands:
//
//	topics                     one "name partitions [id=base64]" a line;
//	                           replaces the topics (the id defaults to the
//	                           name's bytes)
//	assign <assignor> [sticky] one member a line:
//	                           id [instance=I] [subs=t1,t2] [cur=t1:0-2,5;t2:1]
//	                           with sticky, a member without cur= starts from
//	                           its assignment in the previous assign's result
//
// assign prints each member's assignment ("t1:0-2,5 t2:1"), then, when some
// member had a current assignment, how many partitions changed owner.
type ddHarness struct {
	topics map[kafka.UUID]Topic
	names  map[kafka.UUID]string
	ids    map[string]kafka.UUID // by name, for names given an id=
	last   map[string]Assignment
}

// topicID is the topic's id: the one its topics line gave, else one derived
// from the name.
func (h *ddHarness) topicID(name string) kafka.UUID {
	if id, ok := h.ids[name]; ok {
		return id
	}
	return topicID(name)
}

// topicID derives a readable, stable id from a name: its bytes, padded.
func topicID(name string) kafka.UUID {
	var id kafka.UUID
	copy(id[:], name)
	return id
}

func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		h := &ddHarness{}
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			out, err := h.run(td)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			return out
		})
	})
}

func (h *ddHarness) run(td *datadriven.TestData) (string, error) {
	switch td.Cmd {
	case "topics":
		return h.setTopics(td.Input)
	case "assign":
		return h.assign(td)
	}
	return "", fmt.Errorf("unknown command %q", td.Cmd)
}

func (h *ddHarness) setTopics(input string) (string, error) {
	h.topics = map[kafka.UUID]Topic{}
	h.names = map[kafka.UUID]string{}
	h.ids = map[string]kafka.UUID{}
	for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || len(fields) > 3 {
			return "", fmt.Errorf("topic line %q: want name partitions [id=...]", line)
		}
		name := fields[0]
		parts, err := strconv.ParseInt(fields[1], 10, 32)
		if err != nil {
			return "", fmt.Errorf("topic line %q: %w", line, err)
		}
		id := topicID(name)
		if len(fields) == 3 {
			s, ok := strings.CutPrefix(fields[2], "id=")
			if !ok {
				return "", fmt.Errorf("topic line %q: want id=...", line)
			}
			if id, err = kafka.ParseUUID(s); err != nil {
				return "", err
			}
		}
		h.ids[name] = id
		h.topics[id] = Topic{ID: id, Name: name, Partitions: int32(parts)}
		h.names[id] = name
	}
	return "ok\n", nil
}

func (h *ddHarness) assign(td *datadriven.TestData) (string, error) {
	if len(td.CmdArgs) == 0 {
		return "", fmt.Errorf("assign needs an assignor name")
	}
	a, ok := ByName(td.CmdArgs[0].Key)
	if !ok {
		return "", fmt.Errorf("no assignor %q", td.CmdArgs[0].Key)
	}
	sticky := td.HasArg("sticky")
	var spec Spec
	spec.Topics = h.topics
	for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
		m, err := h.parseMember(line, sticky)
		if err != nil {
			return "", err
		}
		spec.Members = append(spec.Members, m)
	}
	slices.SortFunc(spec.Members, func(x, y Member) int { return strings.Compare(x.ID, y.ID) })
	got, err := a.Assign(spec)
	if err != nil {
		return "", err
	}
	h.last = got
	var b strings.Builder
	for _, m := range spec.Members {
		fmt.Fprintf(&b, "%s: %s\n", m.ID, h.format(got[m.ID]))
	}
	if moved, any := movedPartitions(spec, got); any {
		fmt.Fprintf(&b, "moved: %d\n", moved)
	}
	return b.String(), nil
}

func (h *ddHarness) parseMember(line string, sticky bool) (Member, error) {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return Member{}, fmt.Errorf("empty member line")
	}
	m := Member{ID: fields[0]}
	haveCur := false
	for _, f := range fields[1:] {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "instance":
			m.InstanceID = v
		case "rack":
			m.RackID = v
		case "subs":
			for _, name := range strings.Split(v, ",") {
				m.Subscribed = append(m.Subscribed, h.topicID(name))
			}
			slices.SortFunc(m.Subscribed, compareUUID)
		case "cur":
			cur, err := h.parseAssignment(v)
			if err != nil {
				return m, fmt.Errorf("member %s: %w", m.ID, err)
			}
			m.Current, haveCur = cur, true
		default:
			return m, fmt.Errorf("member %s: unknown field %q", m.ID, f)
		}
	}
	if sticky && !haveCur {
		m.Current = h.last[m.ID]
	}
	return m, nil
}

// parseAssignment reads "t1:0-2,5;t2:1".
func (h *ddHarness) parseAssignment(s string) (Assignment, error) {
	a := Assignment{}
	for _, part := range strings.Split(s, ";") {
		name, list, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("assignment %q: want topic:partitions", part)
		}
		var parts []int32
		for _, r := range strings.Split(list, ",") {
			lo, hi, isRange := strings.Cut(r, "-")
			from, err := strconv.Atoi(lo)
			if err != nil {
				return nil, fmt.Errorf("assignment %q: %w", part, err)
			}
			to := from
			if isRange {
				if to, err = strconv.Atoi(hi); err != nil {
					return nil, fmt.Errorf("assignment %q: %w", part, err)
				}
			}
			for q := from; q <= to; q++ {
				parts = append(parts, int32(q))
			}
		}
		a[h.topicID(name)] = parts
	}
	return a, nil
}

// format prints an assignment topic by topic, partitions as ranges.
func (h *ddHarness) format(a Assignment) string {
	if len(a) == 0 {
		return "-"
	}
	ids := slices.SortedFunc(maps.Keys(a), compareUUID)
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(' ')
		}
		name, ok := h.names[id]
		if !ok {
			name = id.String()
		}
		fmt.Fprintf(&b, "%s:%s", name, formatRanges(a[id]))
	}
	return b.String()
}

func formatRanges(parts []int32) string {
	var b strings.Builder
	for i := 0; i < len(parts); {
		j := i
		for j+1 < len(parts) && parts[j+1] == parts[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", parts[i], parts[j])
		} else {
			fmt.Fprintf(&b, "%d", parts[i])
		}
		i = j + 1
	}
	return b.String()
}

// movedPartitions counts the partitions some member held in Current that
// another member got; any reports whether some member had a Current.
func movedPartitions(spec Spec, got map[string]Assignment) (moved int, any bool) {
	type tp struct {
		id kafka.UUID
		q  int32
	}
	owner := map[tp]string{}
	for _, m := range spec.Members {
		for id, parts := range got[m.ID] {
			for _, q := range parts {
				owner[tp{id, q}] = m.ID
			}
		}
	}
	for _, m := range spec.Members {
		any = any || len(m.Current) > 0
		for id, parts := range m.Current {
			for _, q := range parts {
				if o, ok := owner[tp{id, q}]; ok && o != m.ID {
					moved++
				}
			}
		}
	}
	return moved, any
}
