package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// setup creates the topic, learns its id and leaders, and waits until the transaction
// coordinator answers (the first FindCoordinator creates __transaction_state).
func (r *runner) setup() error {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, 2, 1
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(r.ctx, r.cl)
	if err != nil {
		return fmt.Errorf("create %s: %w", topic, err)
	}
	if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil && err != kerr.TopicAlreadyExists {
		return fmt.Errorf("create %s: %w", topic, err)
	}
	if err := r.retry("leaders of "+topic, r.loadLeaders); err != nil {
		return err
	}
	_, err = r.coordinator("txnerr-setup", 1)
	return err
}

// loadLeaders reads the topic's id and partition leaders (done once both have leaders).
func (r *runner) loadLeaders() (bool, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	name := topic
	rt.Topic = &name
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(r.ctx, r.cl)
	if err != nil {
		return false, fmt.Errorf("metadata: %w", err)
	}
	leaders := map[int32]int32{}
	for _, t := range resp.Topics {
		if t.ErrorCode != 0 {
			return false, nil
		}
		r.topicID = t.TopicID
		for _, p := range t.Partitions {
			if p.ErrorCode == 0 && p.Leader >= 0 {
				leaders[p.Partition] = p.Leader
			}
		}
	}
	r.leaders = leaders
	return len(leaders) == 2, nil
}

// coordinator finds the coordinator of key (type 0 group, 1 transaction) and waits until
// it has loaded the key's partition (a read answers without NOT_COORDINATOR or
// COORDINATOR_LOAD_IN_PROGRESS): FindCoordinator answers before the partition is loaded,
// and a step's first request must not race the load.
func (r *runner) coordinator(key string, typ int8) (int32, error) {
	ck := coordKey{key, typ}
	if node, ok := r.ready[ck]; ok {
		return node, nil
	}
	var node int32
	err := r.retry("coordinator of "+key, func() (bool, error) {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorType = typ
		req.CoordinatorKeys = []string{key}
		resp, err := req.RequestWith(r.ctx, r.cl)
		if err != nil {
			return false, fmt.Errorf("find coordinator of %s: %w", key, err)
		}
		if len(resp.Coordinators) != 1 {
			return false, fmt.Errorf("find coordinator of %s: %d answers", key, len(resp.Coordinators))
		}
		c := resp.Coordinators[0]
		if c.ErrorCode != 0 {
			if retriable(c.ErrorCode) {
				return false, nil
			}
			return false, fmt.Errorf("find coordinator of %s: %w", key, kerr.ErrorForCode(c.ErrorCode))
		}
		node = c.NodeID
		code, err := r.probe(node, key, typ)
		return err == nil && !retriable(code), err
	})
	if err == nil {
		r.ready[ck] = node
	}
	return node, err
}

type coordKey struct {
	key string
	typ int8
}

// probe reads key at its coordinator (DescribeTransactions or DescribeGroups, which
// change nothing) and returns the code.
func (r *runner) probe(node int32, key string, typ int8) (int16, error) {
	if typ == 1 {
		req := kmsg.NewPtrDescribeTransactionsRequest()
		req.TransactionalIDs = []string{key}
		kresp, err := r.request(node, 0, req)
		if err != nil {
			return 0, err
		}
		resp := kresp.(*kmsg.DescribeTransactionsResponse)
		if len(resp.TransactionStates) != 1 {
			return 0, fmt.Errorf("describe %s: %d answers", key, len(resp.TransactionStates))
		}
		return resp.TransactionStates[0].ErrorCode, nil
	}
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Groups = []string{key}
	kresp, err := r.request(node, 5, req)
	if err != nil {
		return 0, err
	}
	resp := kresp.(*kmsg.DescribeGroupsResponse)
	if len(resp.Groups) != 1 {
		return 0, fmt.Errorf("describe group %s: %d answers", key, len(resp.Groups))
	}
	return resp.Groups[0].ErrorCode, nil
}

// producer is a transactional id with the producer id and epoch it holds.
type producer struct {
	id        string
	pid       int64
	epoch     int16
	timeoutMs int32 // transaction.timeout.ms of initSettled; 0 is 60000
}

// initPID sends InitProducerId at version v (timeout ms, and for v3+ the producer id and
// epoch to recover, -1 for none) once, printing the answer; a success updates p.
func (r *runner) initPID(p *producer, v int16, timeoutMs int32, pid int64, epoch int16, what string) int16 {
	code, err := r.initQuiet(p, v, timeoutMs, pid, epoch)
	if r.fail(err) {
		return -1
	}
	if code == 0 {
		what = strings.TrimSpace(fmt.Sprintf("%s -> %s epoch %d", what, r.pidName(p.pid), p.epoch))
	}
	r.line(22, v, what, code)
	return code
}

// newProducer initialises a fresh transactional id (60 s timeout) at version v, waiting
// out the coordinator's loading, and prints the answer it settles on.
func (r *runner) newProducer(id string, v int16) *producer {
	return r.newProducerTimeout(id, v, 60000)
}

// newProducerTimeout is newProducer with the transaction timeout given.
func (r *runner) newProducerTimeout(id string, v int16, timeoutMs int32) *producer {
	p := &producer{id: id, pid: -1, epoch: -1, timeoutMs: timeoutMs}
	what := ""
	if timeoutMs != 60000 {
		what = fmt.Sprintf("timeout %d", timeoutMs)
	}
	r.initSettled(p, v, what)
	return p
}

// initSettled sends InitProducerId for p (no producer id to recover) until the answer is
// not retriable, and prints that answer.
func (r *runner) initSettled(p *producer, v int16, what string) {
	if r.err != nil {
		return
	}
	err := r.retry("init "+p.id, func() (bool, error) {
		timeoutMs := p.timeoutMs
		if timeoutMs == 0 {
			timeoutMs = 60000
		}
		code, err := r.initQuiet(p, v, timeoutMs, -1, -1)
		if err != nil || retriable(code) {
			return false, err
		}
		if code != 0 {
			return false, fmt.Errorf("init %s: %w", p.id, kerr.ErrorForCode(code))
		}
		return true, nil
	})
	if r.fail(err) {
		return
	}
	r.line(22, v, strings.TrimSpace(fmt.Sprintf("%s -> %s epoch %d", what, r.pidName(p.pid), p.epoch)), 0)
}

// initQuiet is initPID without the line, for the retries of a setup step.
func (r *runner) initQuiet(p *producer, v int16, timeoutMs int32, pid int64, epoch int16) (int16, error) {
	if r.err != nil {
		return -1, r.err
	}
	node, err := r.coordinator(p.id, 1)
	if err != nil {
		return 0, err
	}
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionalID = &p.id
	req.TransactionTimeoutMillis = timeoutMs
	req.ProducerID, req.ProducerEpoch = pid, epoch
	kresp, err := r.request(node, v, req)
	if err != nil {
		return 0, err
	}
	resp := kresp.(*kmsg.InitProducerIDResponse)
	if resp.ErrorCode == 0 {
		p.pid, p.epoch = resp.ProducerID, resp.ProducerEpoch
	}
	return resp.ErrorCode, nil
}

// tp is a topic partition of a request.
type tp struct {
	topic     string
	partition int32
}

func (t tp) String() string { return fmt.Sprintf("%s-%d", t.topic, t.partition) }

// addPartitions sends the client's AddPartitionsToTxn (v0-3) once and prints one line per
// partition, sorted.
func (r *runner) addPartitions(p *producer, v int16, parts ...tp) {
	if r.err != nil {
		return
	}
	node, err := r.coordinator(p.id, 1)
	if r.fail(err) {
		return
	}
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.TransactionalID, req.ProducerID, req.ProducerEpoch = p.id, p.pid, p.epoch
	for _, t := range parts {
		rt := kmsg.NewAddPartitionsToTxnRequestTopic()
		rt.Topic, rt.Partitions = t.topic, []int32{t.partition}
		req.Topics = append(req.Topics, rt)
	}
	kresp, err := r.request(node, v, req)
	if r.fail(err) {
		return
	}
	var lines []string
	for _, t := range kresp.(*kmsg.AddPartitionsToTxnResponse).Topics {
		for _, pa := range t.Partitions {
			lines = append(lines, fmt.Sprintf("%s-%d %s", t.Topic, pa.Partition, codeName(pa.ErrorCode)))
		}
	}
	sort.Strings(lines)
	if len(lines) == 0 {
		lines = []string{"no partitions answered"}
	}
	for _, l := range lines {
		r.note("%s v%d epoch %d %s", kmsg.NameForKey(req.Key()), v, p.epoch, l)
	}
}

// addOffsets sends AddOffsetsToTxn for group once and prints the answer.
func (r *runner) addOffsets(p *producer, v int16, group string) int16 {
	if r.err != nil {
		return -1
	}
	node, err := r.coordinator(p.id, 1)
	if r.fail(err) {
		return -1
	}
	req := kmsg.NewPtrAddOffsetsToTxnRequest()
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = p.id, p.pid, p.epoch, group
	kresp, err := r.request(node, v, req)
	if r.fail(err) {
		return -1
	}
	code := kresp.(*kmsg.AddOffsetsToTxnResponse).ErrorCode
	r.line(req.Key(), v, fmt.Sprintf("epoch %d", p.epoch), code)
	return code
}

// endTxn sends EndTxn once and prints the answer; from v5 a success returns the bumped
// epoch, which p takes.
func (r *runner) endTxn(p *producer, v int16, commit bool) int16 {
	if r.err != nil {
		return -1
	}
	node, err := r.coordinator(p.id, 1)
	if r.fail(err) {
		return -1
	}
	req := kmsg.NewPtrEndTxnRequest()
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = p.id, p.pid, p.epoch, commit
	kresp, err := r.request(node, v, req)
	if r.fail(err) {
		return -1
	}
	resp := kresp.(*kmsg.EndTxnResponse)
	what := fmt.Sprintf("abort epoch %d", p.epoch)
	if commit {
		what = fmt.Sprintf("commit epoch %d", p.epoch)
	}
	if resp.ErrorCode == 0 && v >= 5 {
		what += fmt.Sprintf(" -> %s epoch %d", r.pidName(resp.ProducerID), resp.ProducerEpoch)
		p.pid, p.epoch = resp.ProducerID, resp.ProducerEpoch
	}
	r.line(req.Key(), v, what, resp.ErrorCode)
	return resp.ErrorCode
}

// describe prints DescribeTransactions' answer for id: the code, and for a known id its
// state, epoch and partitions.
func (r *runner) describe(id string) {
	if r.err != nil {
		return
	}
	st, err := r.describeQuiet(id)
	if r.fail(err) {
		return
	}
	if st.ErrorCode != 0 {
		r.line(65, 0, "", st.ErrorCode)
		return
	}
	r.line(65, 0, fmt.Sprintf("%s epoch %d timeout %d partitions [%s]",
		st.State, st.ProducerEpoch, st.TimeoutMillis, partitionsOf(st)), 0)
}

func (r *runner) describeQuiet(id string) (kmsg.DescribeTransactionsResponseTransactionState, error) {
	var st kmsg.DescribeTransactionsResponseTransactionState
	node, err := r.coordinator(id, 1)
	if err != nil {
		return st, err
	}
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = []string{id}
	kresp, err := r.request(node, 0, req)
	if err != nil {
		return st, err
	}
	resp := kresp.(*kmsg.DescribeTransactionsResponse)
	if len(resp.TransactionStates) != 1 {
		return st, fmt.Errorf("describe %s: %d answers", id, len(resp.TransactionStates))
	}
	return resp.TransactionStates[0], nil
}

func partitionsOf(st kmsg.DescribeTransactionsResponseTransactionState) string {
	var ps []string
	for _, t := range st.Topics {
		for _, p := range t.Partitions {
			ps = append(ps, fmt.Sprintf("%s-%d", t.Topic, p))
		}
	}
	sort.Strings(ps)
	return strings.Join(ps, " ")
}

// waitState waits until id's transaction is in state want (the coordinator ends it on
// its own, as on a timeout), then prints what DescribeTransactions says.
func (r *runner) waitState(id, want string) {
	if r.err != nil {
		return
	}
	err := r.retry("state "+want+" of "+id, func() (bool, error) {
		st, err := r.describeQuiet(id)
		return err == nil && st.ErrorCode == 0 && st.State == want, err
	})
	if r.fail(err) {
		return
	}
	r.describe(id)
}

// settle waits until id's transaction is no longer between states (markers written,
// an epoch fence done), then prints what DescribeTransactions says.
func (r *runner) settle(id string) {
	if r.err != nil {
		return
	}
	err := r.retry("settle "+id, func() (bool, error) {
		st, err := r.describeQuiet(id)
		if err != nil {
			return false, err
		}
		if retriable(st.ErrorCode) {
			return false, nil
		}
		switch st.State {
		case "PrepareCommit", "PrepareAbort", "PrepareEpochFence":
			return false, nil
		}
		return true, nil
	})
	if r.fail(err) {
		return
	}
	r.describe(id)
}
