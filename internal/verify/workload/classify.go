package workload

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/verify/history"
)

// Classify maps a produce promise's error to the op that ends the send:
// Ack for nil, Fail only when the value definitely was not written, Info
// otherwise. A wrong Fail would let the checker excuse a lost write or
// flag a legitimate read as phantom, so anything not known to be a
// refusal before the append is Info: timeouts (kgo's record timeout and
// retry limit, whose earlier attempts may have landed), a lost
// connection, a closed client, a canceled context, and broker errors
// that can follow an append (NOT_ENOUGH_REPLICAS_AFTER_APPEND,
// REQUEST_TIMED_OUT, the sequence errors).
func Classify(err error) history.Kind {
	if err == nil {
		return history.Ack
	}
	if definitelyNotWritten(err) {
		return history.Fail
	}
	return history.Info
}

// refusals are produce errors a broker returns having validated the batch
// without appending it, and that kgo does not retry: a batch failing one
// of them was never in the log (on this attempt or, since kgo does not
// retry them, any earlier one that got an answer).
var refusals = []error{
	kerr.MessageTooLarge,
	kerr.RecordListTooLarge,
	kerr.InvalidRecord,
	kerr.CorruptMessage,
	kerr.InvalidTopicException,
	kerr.InvalidRequiredAcks,
	kerr.InvalidTimestamp,
	kerr.UnsupportedForMessageFormat,
	kerr.UnsupportedVersion,
	kerr.TopicAuthorizationFailed,
	kerr.ClusterAuthorizationFailed,
	kerr.TransactionalIDAuthorizationFailed,
	kerr.PolicyViolation,
}

func definitelyNotWritten(err error) bool {
	// kgo refuses to buffer the record: it never left the client.
	if errors.Is(err, kgo.ErrMaxBuffered) {
		return true
	}
	// A record timeout or retry limit wraps the last broker error; the
	// attempts before it may have been appended.
	if errors.Is(err, kgo.ErrRecordTimeout) || errors.Is(err, kgo.ErrRecordRetries) {
		return false
	}
	for _, r := range refusals {
		if errors.Is(err, r) {
			return true
		}
	}
	return false
}
