package group

// The checks of a ConsumerGroupHeartbeat: Kafka's request validation, and
// the checks made before anything changes.

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// precheckHeartbeat refuses, before anything changes, a heartbeat that
// would fail half-way: an invalid regex, a subscription too large for its
// record, a full classic group a new member would upgrade. Kafka discards
// a failed operation's records; here the state changes as it goes, so the
// checks come first.
func (m *Manager) precheckHeartbeat(req ConsumerHeartbeatRequest) error {
	g, ok := m.groups[req.GroupID]
	if re := req.SubscribedTopicRegex; re != nil && *re != "" {
		known := false
		if ok && g.cg != nil {
			_, known = g.cg.regexes[*re]
		}
		if !known {
			if _, err := compileTopicRegex(*re); err != nil {
				return hbErr(kerr.InvalidRegularExpression.Code, "SubscribedTopicRegex `%s` is not a valid regular expression: %v.", *re, err)
			}
		}
	}
	// Only a subscription makes the record large; a keep-alive (no
	// subscription fields) is not encoded just to be measured.
	if req.SubscribedTopicNames == nil && req.SubscribedTopicRegex == nil {
		return m.checkClassicUpgradeSize(g, ok, req)
	}
	probe := newConsumerMember(req.MemberID)
	probe.instanceID, probe.rackID, probe.subscribedNames = req.InstanceID, req.RackID, req.SubscribedTopicNames
	probe.serverAssignor, probe.clientID, probe.clientHost = req.ServerAssignor, req.ClientID, req.ClientHost
	if req.SubscribedTopicRegex != nil {
		probe.regex = *req.SubscribedTopicRegex
	}
	if err := m.checkRecordSize(opMember{probe}, req.GroupID); err != nil {
		return err
	}
	return m.checkClassicUpgradeSize(g, ok, req)
}

// checkClassicUpgradeSize refuses a new member that would upgrade a classic
// group already at group.consumer.max.size.
func (m *Manager) checkClassicUpgradeSize(g *Group, ok bool, req ConsumerHeartbeatRequest) error {
	if ok && g.cg == nil && g.state != Empty && g.state != Dead && req.MemberEpoch == 0 && len(g.members) >= m.cfg.ConsumerMaxSize {
		return hbErr(kerr.GroupMaxSizeReached.Code, "The consumer group has reached its maximum capacity of %d members.", m.cfg.ConsumerMaxSize)
	}
	return nil
}

// checkRecordSize refuses a member whose metadata record would not fit in
// a write of the offsets partition (a huge subscription), before anything
// is applied: the write would fail and leave the state ahead of the log.
func (m *Manager) checkRecordSize(op cgOp, groupID string) error {
	r := op.record(groupID)
	if n := len(r.Key) + len(r.Value); n > m.cfg.maxRecordBytes() {
		return hbErr(kerr.UnknownServerError.Code, "The member's metadata record of %d bytes exceeds the %d bytes a record of the group coordinator may take.", n, m.cfg.maxRecordBytes())
	}
	return nil
}

// heartbeatWriteErrorCode maps a failed write as Kafka's coordinator does
// for heartbeats: a record too large is UNKNOWN_SERVER_ERROR.
func heartbeatWriteErrorCode(err error) int16 {
	if code := writeErrorCode(err); code != kerr.InvalidCommitOffsetSize.Code {
		return code
	}
	return kerr.UnknownServerError.Code
}

// ValidateConsumerHeartbeat is Kafka's check of a ConsumerGroupHeartbeat
// before it reaches the group: it returns INVALID_REQUEST or
// UNSUPPORTED_ASSIGNOR with Kafka's message, or 0.
func (c *Config) ValidateConsumerHeartbeat(req ConsumerHeartbeatRequest, version int16) (int16, string) {
	invalid := func(msg string) (int16, string) { return kerr.InvalidRequest.Code, msg }
	// Kafka's throwIfEmptyString: blank is empty.
	blank := func(s string) bool { return strings.TrimSpace(s) == "" }
	if (version >= 1 || req.MemberEpoch > 0 || req.MemberEpoch == leaveGroupMemberEpoch) && blank(req.MemberID) {
		return invalid("MemberId can't be empty.")
	}
	switch {
	case blank(req.GroupID):
		return invalid("GroupId can't be empty.")
	case req.InstanceID != nil && blank(*req.InstanceID):
		return invalid("InstanceId can't be empty.")
	case req.RackID != nil && blank(*req.RackID):
		return invalid("RackId can't be empty.")
	}
	switch {
	case req.MemberEpoch == 0:
		if req.RebalanceTimeoutMs == -1 {
			return invalid("RebalanceTimeoutMs must be provided in first request.")
		}
		if req.Owned == nil || len(req.Owned) > 0 {
			return invalid("TopicPartitions must be empty when (re-)joining.")
		}
		if req.SubscribedTopicNames == nil && req.SubscribedTopicRegex == nil {
			return invalid("Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.")
		}
	case req.MemberEpoch == leaveGroupStaticMemberEpoch:
		if req.InstanceID == nil {
			return invalid("InstanceId can't be null.")
		}
	case req.MemberEpoch < leaveGroupStaticMemberEpoch:
		return invalid("MemberEpoch is invalid.")
	}
	if req.ServerAssignor != nil {
		if _, ok := c.assignor(*req.ServerAssignor); !ok {
			return kerr.UnsupportedAssignor.Code, fmt.Sprintf("ServerAssignor %s is not supported. Supported assignors: %s.", *req.ServerAssignor, strings.Join(c.AssignorNames(), ", "))
		}
	}
	return 0, ""
}
