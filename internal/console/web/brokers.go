package web

import (
	"context"
	"fmt"
	"net/http"
	"sort"

	"github.com/twmb/franz-go/pkg/kadm"
)

// maxDirPartitions bounds the partitions a broker page lists per log dir
// (the largest first).
const maxDirPartitions = 100

type logDirRow struct {
	Dir         string
	Partitions  int
	Size        int64
	TotalBytes  int64
	UsableBytes int64
	Error       string
	// Largest are the dir's largest partitions (broker page only).
	Largest []kadm.DescribedLogDirPartition
}

type brokerRow struct {
	ID   int32
	Host string
	Port int32
	Rack string
	// Controller: this node leads the metadata quorum.
	Controller bool
	LogDirs    []logDirRow
}

type brokersData struct {
	Brokers []brokerRow
	// LogDirsError says why log dirs are missing.
	LogDirsError string
}

// brokersPage lists the brokers with racks and their log dirs and sizes.
func (c *Console) brokersPage(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx, cancel := context.WithTimeout(r.Context(), pageTimeout)
	defer cancel()
	adm := s.Admin()
	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	dirs, err := adm.DescribeAllLogDirs(ctx, nil)
	d := brokersData{}
	if err != nil {
		d.LogDirsError = "DescribeLogDirs: " + err.Error()
	}
	leader := activeController(ctx, s.Client())
	for _, b := range md.Brokers {
		row := brokerRow{ID: b.NodeID, Host: b.Host, Port: b.Port, Controller: b.NodeID == leader}
		if b.Rack != nil {
			row.Rack = *b.Rack
		}
		row.LogDirs = logDirRows(dirs[b.NodeID], 0)
		d.Brokers = append(d.Brokers, row)
	}
	sort.Slice(d.Brokers, func(i, j int) bool { return d.Brokers[i].ID < d.Brokers[j].ID })
	c.render(w, s, http.StatusOK, "brokers.html", "Brokers", d)
	return nil
}

// logDirRows summarizes a broker's log dirs, listing up to largest
// partitions of each.
func logDirRows(dirs kadm.DescribedLogDirs, largest int) []logDirRow {
	var rows []logDirRow
	for _, d := range dirs.Sorted() {
		row := logDirRow{Dir: d.Dir, Size: d.Size(), TotalBytes: d.TotalBytes, UsableBytes: d.UsableBytes}
		if d.Err != nil {
			row.Error = d.Err.Error()
		}
		ps := d.Topics.Sorted()
		row.Partitions = len(ps)
		if largest > 0 {
			sort.SliceStable(ps, func(i, j int) bool { return ps[i].Size > ps[j].Size })
			row.Largest = ps[:min(len(ps), largest)]
		}
		rows = append(rows, row)
	}
	return rows
}

type brokerData struct {
	Broker       brokerRow
	Configs      []configRow
	ConfigsError string
	LogDirsError string
}

// brokerPage shows one broker's configs and log dirs.
func (c *Console) brokerPage(w http.ResponseWriter, r *http.Request, s *session) error {
	id, err := parseBrokerID(r.PathValue("id"))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(r.Context(), pageTimeout)
	defer cancel()
	adm := s.Admin()
	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	b, ok := md.Brokers.NodeIDs(), false
	d := brokerData{}
	for _, bd := range md.Brokers {
		if bd.NodeID == id {
			ok = true
			d.Broker = brokerRow{ID: id, Host: bd.Host, Port: bd.Port, Controller: id == activeController(ctx, s.Client())}
			if bd.Rack != nil {
				d.Broker.Rack = *bd.Rack
			}
		}
	}
	if !ok {
		return userError(http.StatusNotFound, "There is no broker %d (brokers: %v).", id, b)
	}
	dirs, err := adm.DescribeBrokerLogDirs(ctx, id, nil)
	if err != nil {
		d.LogDirsError = "DescribeLogDirs: " + err.Error()
	}
	d.Broker.LogDirs = logDirRows(dirs, maxDirPartitions)
	rcs, err := adm.DescribeBrokerConfigs(ctx, id)
	if err == nil && len(rcs) == 1 && rcs[0].Err != nil {
		err = kafkaRefused(fmt.Sprintf("describe broker %d's configs", id), rcs[0].Err, rcs[0].ErrMessage)
	}
	if err != nil {
		d.ConfigsError = "DescribeConfigs: " + err.Error()
	} else if len(rcs) == 1 {
		d.Configs = configRows(rcs[0].Configs)
	}
	c.render(w, s, http.StatusOK, "broker.html", fmt.Sprintf("Broker %d", id), d)
	return nil
}
