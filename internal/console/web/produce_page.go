package web

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/twmb/franz-go/pkg/kerr"
)

// produceView is the produce page: the form as typed, and where the
// message went or why it did not.
type produceView struct {
	Form   url.Values
	Topics []string
	Result *produced
	Error  string
}

// FormValue is a form field as typed.
func (v produceView) FormValue(name string) string { return v.Form.Get(name) }

// producePage serves the form; ?topic= preselects a topic.
func (c *Console) producePage(w http.ResponseWriter, r *http.Request, s *session) error {
	v := produceView{Form: r.URL.Query(), Topics: c.topicNames(r, s)}
	c.render(w, s, http.StatusOK, "produce.html", "Produce a message", v)
	return nil
}

// produceAction writes the posted message (CSRF and read-only mode were
// checked by the router) and shows the partition and offset, or the
// error: a refusal of ours with its status, Kafka's refusal as a 400 (403
// when the user's ACLs forbid it) with Kafka's error name and text, a
// failure to reach the cluster as a 502.
func (c *Console) produceAction(w http.ResponseWriter, r *http.Request, s *session) error {
	v := produceView{Form: r.PostForm, Topics: c.topicNames(r, s)}
	status := http.StatusOK
	p, err := parseProduceForm(r.PostForm)
	if err == nil {
		var res produced
		if res, err = produceOne(r.Context(), s.Client(), p); err == nil {
			v.Result = &res
		}
	}
	var he *httpError
	var ke *kerr.Error
	switch {
	case errors.As(err, &he):
		status, v.Error = he.status, he.msg
	case errors.As(err, &ke):
		status, v.Error = http.StatusBadRequest, "Kafka refused the message: "+ke.Error()
		if refusedStatus(err) == http.StatusForbidden {
			status = http.StatusForbidden
		}
	case err != nil:
		c.log.Warn("web console: produce", "topic", p.Topic, "err", err)
		status, v.Error = http.StatusBadGateway, "The message was not written: "+err.Error()
	}
	c.render(w, s, status, "produce.html", "Produce a message", v)
	return nil
}
