package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// messageRoutes are the message browser, produce, consumer group and
// reassignment pages.
func (c *Console) messageRoutes(rt router) {
	rt.page("/messages", c.browsePage)
	rt.page("/produce", c.producePage)
	rt.action("/produce", c.produceAction)
	rt.page("/groups", c.groupsPage)
	rt.page("/groups/{group}", c.groupPage)
	rt.page("/groups/{group}/reset", c.resetPreviewPage)
	rt.action("/groups/{group}/reset", c.resetAction)
	rt.page("/reassignments", c.reassignmentsPage)
}

// browseView is the browser page: the form as typed, and a result or a
// message saying what was wrong.
type browseView struct {
	Form    url.Values
	Topics  []string
	Error   string
	Notes   []string
	Result  *browseResult
	Records []shownRecord
	Summary string
	// Older and Newer link to the neighbouring pages ("" when none).
	Older, Newer string
}

// FormValue is a form field as typed (the template refills the form).
func (v browseView) FormValue(name string) string { return v.Form.Get(name) }

// browsePage serves /messages. Without a topic it shows the form; bad input
// is the form again with the message and a 400.
func (c *Console) browsePage(w http.ResponseWriter, r *http.Request, s *session) error {
	v := browseView{Form: r.URL.Query()}
	v.Topics = c.topicNames(r, s)
	if v.Form.Get("topic") == "" {
		c.render(w, s, http.StatusOK, "browse.html", "Messages", v)
		return nil
	}
	q, err := parseBrowseQuery(v.Form)
	if err == nil {
		var res browseResult
		if res, err = (browser{cl: s.Client(), clk: c.clock}).browse(r.Context(), q); err == nil {
			v.show(res)
		}
	}
	status := http.StatusOK
	var qe *queryError
	switch {
	case errors.As(err, &qe):
		status, v.Error = http.StatusBadRequest, qe.msg
	case err != nil:
		c.log.Warn("web console: browse", "topic", q.Topic, "partition", q.Partition, "err", err)
		status, v.Error = refusedStatus(err), "the cluster answered: "+err.Error()
	}
	c.render(w, s, status, "browse.html", "Messages", v)
	return nil
}

// show fills the view from a result.
func (v *browseView) show(res browseResult) {
	v.Result = &res
	v.Notes = res.Notes
	for _, rec := range res.Records {
		v.Records = append(v.Records, showRecord(rec, res.Query.Render))
	}
	v.Summary = summary(res)
	if res.Older >= 0 {
		q := res.Query
		q.Mode, q.Offset = modeNewest, res.Older
		v.Older = "/messages?" + q.values().Encode()
	}
	if res.Newer >= 0 {
		q := res.Query
		q.Mode, q.Offset = modeOffset, res.Newer
		v.Newer = "/messages?" + q.values().Encode()
	}
}

// summary is the line above the records: what was read and why it stopped.
func summary(res browseResult) string {
	b := res.Bounds
	where := fmt.Sprintf("Partition %d holds offsets %d to %d.", res.Query.Partition, b.Start, b.End-1)
	if b.Start == b.End {
		where = fmt.Sprintf("Partition %d is empty (end offset %d).", res.Query.Partition, b.End)
	}
	// Next is where reading stopped: forward, the offset after the last
	// record examined; newest first, the lowest offset examined.
	why := "."
	if res.Stop != "" {
		why = ": " + string(res.Stop) + "."
	}
	if res.Query.Search != "" {
		return fmt.Sprintf("%s Scanned %d records, %d matched, stopped at offset %d%s", where, res.Scanned, res.Matched, res.Next, why)
	}
	return fmt.Sprintf("%s Read %d records, stopped at offset %d%s", where, res.Scanned, res.Next, why)
}

// topicNames lists the topics for the form's choice (the first
// maxTopicChoices by name); a failure leaves the list empty (the topic can
// still be typed).
func (c *Console) topicNames(r *http.Request, s *session) []string {
	tds, err := kadm.NewClient(s.Client()).ListTopics(r.Context())
	if err != nil {
		return nil
	}
	names := tds.Names()
	sort.Strings(names)
	return names[:min(len(names), maxTopicChoices)]
}

// maxTopicChoices bounds the topics a form offers; others can be typed.
const maxTopicChoices = 1000

// refusedStatus is the status of a page the cluster refused: 403 when the
// user's ACLs forbid it, else 502 (the console is a client; the failure is
// the cluster's answer).
func refusedStatus(err error) int {
	for _, denied := range []error{kerr.TopicAuthorizationFailed, kerr.GroupAuthorizationFailed, kerr.ClusterAuthorizationFailed, kerr.TransactionalIDAuthorizationFailed} {
		if errors.Is(err, denied) {
			return http.StatusForbidden
		}
	}
	return http.StatusBadGateway
}
