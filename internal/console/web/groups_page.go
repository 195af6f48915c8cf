package web

import (
	"cmp"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

// groupsView is the groups list.
type groupsView struct {
	Groups []groupRow
	Note   string
}

func (c *Console) groupsPage(w http.ResponseWriter, r *http.Request, s *session) error {
	rows, note, err := listGroups(r.Context(), kadm.NewClient(s.Client()))
	if err != nil {
		return err
	}
	c.render(w, s, http.StatusOK, "groups.html", "Consumer groups", groupsView{Groups: rows, Note: note})
	return nil
}

// groupView is a group's page: its members, offsets and lag, the lag
// chart, and the reset form (or a reset's preview or outcome).
type groupView struct {
	Group    groupDetail
	LagChart template.HTML
	LagNote  string
	Topics   []string // the group's topics, for the reset form
	Reset    *resetView
}

// resetView is a reset's preview (Applied false) or outcome.
type resetView struct {
	Spec    resetSpec
	Form    url.Values
	Rows    []resetRow
	Applied bool
	Error   string
	// Results are the broker's answers per partition after applying.
	Results []resetResult
}

// FormValue is a reset form field as typed.
func (v *resetView) FormValue(name string) string {
	if v == nil {
		return ""
	}
	return v.Form.Get(name)
}

type resetResult struct {
	Topic     string
	Partition int32
	Offset    int64
	Error     string
}

func (c *Console) groupPage(w http.ResponseWriter, r *http.Request, s *session) error {
	v, err := c.groupView(r, s)
	if err != nil {
		return err
	}
	c.render(w, s, http.StatusOK, "groups_group.html", "Group "+v.Group.Name, v)
	return nil
}

// groupView describes the group in the URL; an unknown group is a 404.
func (c *Console) groupView(r *http.Request, s *session) (groupView, error) {
	name := r.PathValue("group")
	d, err := describeGroup(r.Context(), kadm.NewClient(s.Client()), name)
	if isUnknownGroup(err) {
		return groupView{}, userError(http.StatusNotFound, "Group %q does not exist (no coordinator lists it).", clip(name))
	}
	if err != nil {
		return groupView{}, err
	}
	v := groupView{Group: d}
	seen := make(map[string]bool)
	for _, p := range d.Partitions {
		if !seen[p.Topic] {
			seen[p.Topic] = true
			v.Topics = append(v.Topics, p.Topic)
		}
	}
	v.LagChart, v.LagNote = c.groupLagChart(name)
	return v, nil
}

// groupLagChart draws the group's lag over the sampled history
// (kafka_consumergroup_lag_sum of this node, which only the group's
// coordinator exports).
func (c *Console) groupLagChart(group string) (template.HTML, string) {
	_, bySeries := lagSeries(c.history.samples())
	pts := bySeries[group]
	if len(pts) == 0 {
		return "", "No lag history for this group on this node: the lag is exported by the node coordinating the group, sampled every 10 s."
	}
	return chart("group-lag-chart", []series{{name: group, points: pts}}, func(v float64) string { return fmt.Sprintf("%.0f", v) }), ""
}

// resetPreviewPage is the dry run: the group page with the plan's table
// (current -> new per partition) and a form that applies it.
func (c *Console) resetPreviewPage(w http.ResponseWriter, r *http.Request, s *session) error {
	v, err := c.groupView(r, s)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	v.Reset = &resetView{Form: q}
	status := http.StatusOK
	spec, err := parseResetSpec(q)
	if err == nil {
		v.Reset.Spec = spec
		v.Reset.Rows, err = planReset(r.Context(), kadm.NewClient(s.Client()), v.Group.Name, spec)
	}
	if err != nil {
		status, v.Reset.Error = c.statusOf(err)
	}
	c.render(w, s, status, "groups_group.html", "Group "+v.Group.Name, v)
	return nil
}

// resetAction applies a reset (CSRF and read-only mode were checked). The
// plan is computed again (offsets may have moved since the preview); the
// page shows what the broker answered for each partition.
func (c *Console) resetAction(w http.ResponseWriter, r *http.Request, s *session) error {
	v, err := c.groupView(r, s)
	if err != nil {
		return err
	}
	v.Reset = &resetView{Form: r.PostForm, Applied: true}
	status := http.StatusOK
	spec, err := parseResetSpec(r.PostForm)
	if err == nil {
		v.Reset.Spec = spec
		err = c.applyResetTo(r, s, &v)
	}
	if err != nil {
		status, v.Reset.Error = c.statusOf(err)
	}
	c.render(w, s, status, "groups_group.html", "Group "+v.Group.Name, v)
	return nil
}

// applyResetTo commits the plan and lets the broker judge: Kafka takes an
// admin commit only while the group is Empty (UNKNOWN_MEMBER_ID otherwise).
// A refusal shows Kafka's error, with why, when the group has members.
func (c *Console) applyResetTo(r *http.Request, s *session, v *groupView) error {
	adm := kadm.NewClient(s.Client())
	rows, err := planReset(r.Context(), adm, v.Group.Name, v.Reset.Spec)
	if err != nil {
		return err
	}
	v.Reset.Rows = rows
	resps, err := applyReset(r.Context(), adm, v.Group.Name, rows)
	if err != nil {
		return err
	}
	var firstErr error
	failed := 0
	for _, o := range resps.Sorted() {
		res := resetResult{Topic: o.Topic, Partition: o.Partition, Offset: o.At}
		if o.Err != nil {
			res.Error = o.Err.Error()
			failed++
			firstErr = cmp.Or(firstErr, o.Err)
		}
		v.Reset.Results = append(v.Reset.Results, res)
	}
	if failed > 0 {
		msg := fmt.Sprintf("Kafka refused the reset of %d of %d partitions: %s.", failed, len(v.Reset.Results), strings.TrimRight(firstErr.Error(), ". "))
		if len(v.Group.Members) > 0 {
			return userError(http.StatusConflict, "%s Offsets can be reset only while the group has no members: group %q is %s with %d members. Stop its consumers, then reset.",
				msg, clip(v.Group.Name), v.Group.State, len(v.Group.Members))
		}
		return userError(http.StatusConflict, "%s", msg)
	}
	// Show the group as it is now.
	if d, err := describeGroup(r.Context(), adm, v.Group.Name); err == nil {
		v.Group = d
	}
	return nil
}

// statusOf maps an error to the status and message shown on the page: a
// user error as it is, Kafka's answer as 502 (403 when the user's ACLs
// forbid it) with Kafka's text.
func (c *Console) statusOf(err error) (int, string) {
	var he *httpError
	if errors.As(err, &he) {
		return he.status, he.msg
	}
	c.log.Warn("web console: group action", "err", err)
	return refusedStatus(err), "The cluster answered: " + err.Error()
}
