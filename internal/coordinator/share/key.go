package share

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/sluice-io/sluice/internal/kafka"
)

// Key names a share partition's state (Kafka's SharePartitionKey): a
// partition of a topic, as consumed by one share group.
type Key struct {
	GroupID   string
	TopicID   kafka.UUID
	Partition int32
}

// CoordinatorKey is the key's text form, "group:topicId:partition"
// (SharePartitionKey.asCoordinatorKey): FindCoordinator's key for the share
// coordinator, and the string hashed onto __share_group_state.
func (k Key) CoordinatorKey() string {
	return k.GroupID + ":" + k.TopicID.String() + ":" + strconv.Itoa(int(k.Partition))
}

func (k Key) String() string { return k.CoordinatorKey() }

// ParseCoordinatorKey reads a coordinator key as Kafka's
// SharePartitionKey.getInstance does: the last two ':'-separated fields
// are the topic id and the partition, everything before (colons included)
// the group, which must not be blank. Like Java's String.split, trailing
// empty fields are dropped first.
func ParseCoordinatorKey(s string) (Key, error) {
	if s == "" {
		return Key{}, errors.New("share partition key cannot be empty")
	}
	parts := strings.Split(s, ":")
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) < 3 {
		return Key{}, fmt.Errorf("invalid share partition key %q: want group:topicId:partition", s)
	}
	n := len(parts)
	group := strings.Join(parts[:n-2], ":")
	if strings.TrimFunc(group, func(r rune) bool { return r <= ' ' }) == "" {
		return Key{}, errors.New("group id must not be empty")
	}
	if len(parts[n-2]) > 24 {
		return Key{}, fmt.Errorf("invalid topic id %q in share partition key", parts[n-2])
	}
	id, err := kafka.ParseUUID(parts[n-2])
	if err != nil {
		return Key{}, fmt.Errorf("invalid topic id in share partition key: %w", err)
	}
	p, err := strconv.ParseInt(parts[n-1], 10, 32)
	if err != nil {
		return Key{}, fmt.Errorf("invalid partition %q in share partition key", parts[n-1])
	}
	return Key{GroupID: group, TopicID: id, Partition: int32(p)}, nil
}
