package consumerrec

import "github.com/twmb/franz-go/pkg/kbin"

// ConsumerGroupMemberMetadataValue is a member's subscription and client
// (record type 5).
type ConsumerGroupMemberMetadataValue struct {
	InstanceID           *string  // the static member's instance id, or null
	RackID               *string  // the member's rack, or null
	ClientID             string   // the client id
	ClientHost           string   // the client host
	SubscribedTopicNames []string // the subscribed topic names
	SubscribedTopicRegex *string  // the subscribed regular expression, or null
	RebalanceTimeoutMs   int32    // the rebalance timeout (Kafka's default -1)
	ServerAssignor       *string  // the server assignor asked for, or null
	// ClassicMemberMetadata (tagged field 0) is set for a member that
	// joined with the classic protocol. nil is Kafka's null, which Kafka
	// writes for a member of the consumer protocol; a zero value is the
	// default and is not written; an absent tag reads as the zero value.
	ClassicMemberMetadata *ClassicMemberMetadata
}

// ClassicMemberMetadata is what a classic-protocol member of a consumer
// group joined with.
type ClassicMemberMetadata struct {
	SessionTimeoutMs   int32             // the classic session timeout
	SupportedProtocols []ClassicProtocol // the protocols the member supports
}

// ClassicProtocol is one protocol of a classic member's JoinGroup.
type ClassicProtocol struct {
	Name     string // the protocol name
	Metadata []byte // the protocol metadata
}

// minClassicProtocol is the smallest ClassicProtocol: name, bytes, tags.
const minClassicProtocol = 1 + 1 + 1

// isDefault tells Kafka's default ClassicMemberMetadata, which is not
// written.
func (c *ClassicMemberMetadata) isDefault() bool {
	return c.SessionTimeoutMs == 0 && len(c.SupportedProtocols) == 0
}

// RecordType returns TypeConsumerGroupMemberMetadata.
func (*ConsumerGroupMemberMetadataValue) RecordType() int16 {
	return TypeConsumerGroupMemberMetadata
}

// AppendTo appends the value, version first.
func (v *ConsumerGroupMemberMetadataValue) AppendTo(dst []byte) []byte {
	dst = appendValueHeader(dst)
	dst = kbin.AppendCompactNullableString(dst, v.InstanceID)
	dst = kbin.AppendCompactNullableString(dst, v.RackID)
	dst = kbin.AppendCompactString(dst, v.ClientID)
	dst = kbin.AppendCompactString(dst, v.ClientHost)
	dst = appendCompactStrings(dst, v.SubscribedTopicNames)
	dst = kbin.AppendCompactNullableString(dst, v.SubscribedTopicRegex)
	dst = kbin.AppendInt32(dst, v.RebalanceTimeoutMs)
	dst = kbin.AppendCompactNullableString(dst, v.ServerAssignor)
	return appendClassicTag(dst, v.ClassicMemberMetadata)
}

// appendClassicTag writes the tagged section with ClassicMemberMetadata as
// a nullable struct: a uvarint 0 for null, 1 then the struct.
func appendClassicTag(dst []byte, c *ClassicMemberMetadata) []byte {
	if c != nil && c.isDefault() {
		return noTags(dst)
	}
	dst = kbin.AppendUvarint(dst, 1)
	if c == nil {
		return appendTag(dst, 0, []byte{0})
	}
	body := kbin.AppendUvarint(nil, 1)
	body = kbin.AppendInt32(body, c.SessionTimeoutMs)
	body = appendArray(body, c.SupportedProtocols, appendClassicProtocol)
	body = noTags(body)
	return appendTag(dst, 0, body)
}

func appendClassicProtocol(dst []byte, p *ClassicProtocol) []byte {
	dst = kbin.AppendCompactString(dst, p.Name)
	dst = kbin.AppendCompactBytes(dst, p.Metadata)
	return noTags(dst)
}

// ReadFrom decodes a value written by AppendTo (or Kafka).
func (v *ConsumerGroupMemberMetadataValue) ReadFrom(b []byte) error {
	var x ConsumerGroupMemberMetadataValue
	err := readValue(b, "ConsumerGroupMemberMetadataValue", func(d *decoder) {
		x.InstanceID = d.compactNullableString("InstanceId")
		x.RackID = d.compactNullableString("RackId")
		x.ClientID = d.compactString("ClientId")
		x.ClientHost = d.compactString("ClientHost")
		x.SubscribedTopicNames = d.compactStrings("SubscribedTopicNames")
		x.SubscribedTopicRegex = d.compactNullableString("SubscribedTopicRegex")
		x.RebalanceTimeoutMs = d.int32()
		x.ServerAssignor = d.compactNullableString("ServerAssignor")
		x.ClassicMemberMetadata = &ClassicMemberMetadata{SupportedProtocols: []ClassicProtocol{}}
		d.tags(func(tag int32, fd *decoder) bool {
			if tag != 0 {
				return false
			}
			x.ClassicMemberMetadata = readClassicMemberMetadata(fd)
			return true
		})
	})
	if err == nil {
		*v = x
	}
	return err
}

// readClassicMemberMetadata reads the nullable struct of tag 0; as in
// Kafka, a marker that is not positive is null.
func readClassicMemberMetadata(d *decoder) *ClassicMemberMetadata {
	if marker := d.uvarint(); marker <= 0 || !d.ok() {
		return nil
	}
	c := &ClassicMemberMetadata{SessionTimeoutMs: d.int32()}
	c.SupportedProtocols = array(d, "SupportedProtocols", minClassicProtocol, readClassicProtocol)
	d.skipTags()
	return c
}

func readClassicProtocol(d *decoder, p *ClassicProtocol) {
	p.Name = d.compactString("Name")
	p.Metadata = d.compactBytes("Metadata")
	d.skipTags()
}
