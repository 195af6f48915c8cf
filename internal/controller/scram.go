package controller

// AlterUserScramCredentials as Kafka's ScramControlManager: deletions and
// upsertions keyed by user (a user may appear once per request, whatever
// the mechanism), validated, and upsertions turned from the salted password
// the client sends into the stored key and server key the server keeps.

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/metadata"
)

// Kafka's iteration bounds for SCRAM credentials: the mechanisms' minimum
// (internals.ScramMechanism.minIterations, 4096 for both) and the
// controller's maximum (ScramControlManager.MAX_ITERATIONS).
const (
	ScramMinIterations = 4096
	ScramMaxIterations = 16384
)

// scramMetadataVersion is the first metadata.version with SCRAM records
// (Kafka's 3.5-IV2).
const scramMetadataVersion = 11

// userErrors keeps per-user errors in the order users first failed.
type userErrors struct {
	order []string
	errs  map[string]userError
}

type userError struct {
	err *kerr.Error
	msg string
}

func (u *userErrors) has(user string) bool { _, ok := u.errs[user]; return ok }

func (u *userErrors) set(user string, err *kerr.Error, msg string) {
	if !u.has(user) {
		u.order = append(u.order, user)
	}
	u.errs[user] = userError{err, msg}
}

// AlterUserScramCredentials computes the records and response of an
// AlterUserScramCredentials request: successful deletions, then successful
// upsertions, then the failures, as Kafka lists them.
func (c *Controller) AlterUserScramCredentials(im *metadata.Image, req *kmsg.AlterUserSCRAMCredentialsRequest) ([]metadata.Record, *kmsg.AlterUserSCRAMCredentialsResponse) {
	supported := im.FeatureLevel(metadata.MetadataVersionFeature) >= scramMetadataVersion
	failed := &userErrors{errs: map[string]userError{}}
	deletions := newOrdered[kmsg.AlterUserSCRAMCredentialsRequestDeletion]()
	upsertions := newOrdered[kmsg.AlterUserSCRAMCredentialsRequestUpsertion]()
	duplicate := func(user string) {
		failed.set(user, kerr.DuplicateResource, "A user credential cannot be altered twice in the same request")
	}
	for _, d := range req.Deletions {
		switch {
		case failed.has(d.Name):
		case deletions.remove(d.Name):
			duplicate(d.Name)
		case !supported:
			failed.set(d.Name, kerr.UnsupportedVersion, "The current metadata.version does not support SCRAM")
		default:
			if err, msg := validateScramDeletion(im, d); err != nil {
				failed.set(d.Name, err, msg)
			} else {
				deletions.put(d.Name, d)
			}
		}
	}
	for _, u := range req.Upsertions {
		switch {
		case failed.has(u.Name):
		case deletions.remove(u.Name) || upsertions.remove(u.Name):
			duplicate(u.Name)
		case !supported:
			failed.set(u.Name, kerr.UnsupportedVersion, "The current metadata.version does not support SCRAM")
		default:
			if err, msg := validateScramUpsertion(u); err != nil {
				failed.set(u.Name, err, msg)
			} else {
				upsertions.put(u.Name, u)
			}
		}
	}
	return scramResult(req, deletions, upsertions, failed)
}

func scramResult(req *kmsg.AlterUserSCRAMCredentialsRequest, deletions *ordered[kmsg.AlterUserSCRAMCredentialsRequestDeletion],
	upsertions *ordered[kmsg.AlterUserSCRAMCredentialsRequestUpsertion], failed *userErrors) ([]metadata.Record, *kmsg.AlterUserSCRAMCredentialsResponse) {
	resp := kmsg.NewPtrAlterUserSCRAMCredentialsResponse()
	resp.Version = req.Version
	ok := func(user string) {
		r := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		r.User = user
		resp.Results = append(resp.Results, r)
	}
	var records []metadata.Record
	for _, d := range deletions.values() {
		records = append(records, &metadata.RemoveUserScramCredentialRecord{Name: d.Name, Mechanism: metadata.ScramMechanism(d.Mechanism)})
		ok(d.Name)
	}
	for _, u := range upsertions.values() {
		records = append(records, scramRecord(u))
		ok(u.Name)
	}
	for _, user := range failed.order {
		r := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		r.User = user
		r.ErrorCode, r.ErrorMessage = errMessage(failed.errs[user].err, failed.errs[user].msg)
		resp.Results = append(resp.Results, r)
	}
	return records, resp
}

func validateScramName(name string, mech int8) (*kerr.Error, string) {
	if name == "" {
		return kerr.UnacceptableCredential, "Username must not be empty"
	}
	if !metadata.ScramMechanism(mech).Known() {
		return kerr.UnsupportedSaslMechanism, "Unknown SCRAM mechanism"
	}
	return nil, ""
}

func validateScramDeletion(im *metadata.Image, d kmsg.AlterUserSCRAMCredentialsRequestDeletion) (*kerr.Error, string) {
	if err, msg := validateScramName(d.Name, d.Mechanism); err != nil {
		return err, msg
	}
	if _, ok := im.ScramCredential(d.Name, metadata.ScramMechanism(d.Mechanism)); !ok {
		return kerr.ResourceNotFound, "Attempt to delete a user credential that does not exist"
	}
	return nil, ""
}

func validateScramUpsertion(u kmsg.AlterUserSCRAMCredentialsRequestUpsertion) (*kerr.Error, string) {
	if err, msg := validateScramName(u.Name, u.Mechanism); err != nil {
		return err, msg
	}
	switch {
	case u.Iterations < ScramMinIterations:
		return kerr.UnacceptableCredential, "Too few iterations"
	case u.Iterations > ScramMaxIterations:
		return kerr.UnacceptableCredential, "Too many iterations"
	}
	return nil, ""
}

// scramRecord derives what the server keeps from the salted password
// (RFC 5802, Kafka's ScramFormatter): StoredKey = H(HMAC(SaltedPassword,
// "Client Key")), ServerKey = HMAC(SaltedPassword, "Server Key").
func scramRecord(u kmsg.AlterUserSCRAMCredentialsRequestUpsertion) *metadata.UserScramCredentialRecord {
	mech := metadata.ScramMechanism(u.Mechanism)
	newHash := sha256.New
	if mech == metadata.ScramSHA512 {
		newHash = sha512.New
	}
	mac := func(msg string) []byte {
		m := hmac.New(newHash, u.SaltedPassword)
		m.Write([]byte(msg))
		return m.Sum(nil)
	}
	h := newHash()
	h.Write(mac("Client Key"))
	return &metadata.UserScramCredentialRecord{
		Name: u.Name, Mechanism: mech, Salt: append([]byte(nil), u.Salt...),
		StoredKey: h.Sum(nil), ServerKey: mac("Server Key"), Iterations: u.Iterations,
	}
}

// ordered is a map that remembers the order of its keys, so responses
// list entries in request order where Kafka iterates a HashMap.
type ordered[V any] struct {
	keys []string
	vals map[string]V
}

func newOrdered[V any]() *ordered[V] { return &ordered[V]{vals: map[string]V{}} }

func (o *ordered[V]) put(k string, v V) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// remove deletes k and reports whether it was there.
func (o *ordered[V]) remove(k string) bool {
	if _, ok := o.vals[k]; !ok {
		return false
	}
	delete(o.vals, k)
	for i, x := range o.keys {
		if x == k {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
	return true
}

func (o *ordered[V]) values() []V {
	out := make([]V, 0, len(o.keys))
	for _, k := range o.keys {
		out = append(out, o.vals[k])
	}
	return out
}
