package web

import (
	"context"
	"net/http"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// pageTimeout bounds the Kafka requests one page makes.
const pageTimeout = 15 * time.Second

type overviewData struct {
	ClusterID  string
	Controller int32
	Brokers    []kadm.BrokerDetail
	Topics     int
	Partitions int
}

// overviewPage is the cluster at a glance.
func (c *Console) overviewPage(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx, cancel := context.WithTimeout(r.Context(), pageTimeout)
	defer cancel()
	md, err := s.Admin().Metadata(ctx)
	if err != nil {
		return err
	}
	d := overviewData{ClusterID: md.Cluster, Controller: md.Controller, Brokers: md.Brokers, Topics: len(md.Topics)}
	for _, t := range md.Topics {
		d.Partitions += len(t.Partitions)
	}
	c.render(w, s, http.StatusOK, "overview.html", "Overview", d)
	return nil
}
