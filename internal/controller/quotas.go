package controller

// AlterClientQuotas as Kafka's ClientQuotaControlManager: per entity, its
// types (user, client-id, both, or ip alone) and names checked, each key
// checked against the keys of its entity kind and their types, unchanged
// values left alone, removals of unset keys skipped; one answer per
// entity.

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/metadata"
)

// quotaKeyType is the type of a quota key in Kafka's QuotaConfig.
type quotaKeyType int

const (
	quotaDouble quotaKeyType = iota
	quotaLong
	quotaInt
)

// userClientQuotaKeys and ipQuotaKeys are Kafka's
// QuotaConfig.userAndClientQuotaConfigs and ipConfigs.
var (
	userClientQuotaKeys = map[string]quotaKeyType{
		metadata.QuotaProducerByteRate:       quotaLong,
		metadata.QuotaConsumerByteRate:       quotaLong,
		metadata.QuotaRequestPercentage:      quotaDouble,
		metadata.QuotaControllerMutationRate: quotaDouble,
	}
	ipQuotaKeys = map[string]quotaKeyType{metadata.QuotaConnectionCreationRate: quotaInt}
)

// rawEntity is a request's entity as Kafka reads it: a map of entity type
// to name (a repeated type keeps its last name), unknown types included.
type rawEntity map[string]*string

func newRawEntity(parts []kmsg.AlterClientQuotasRequestEntryEntity) rawEntity {
	e := rawEntity{}
	for _, p := range parts {
		e[p.Type] = p.Name
	}
	return e
}

// types lists the entity's types in the order Kafka's map iterates them
// (client-id, user, ip), unknown ones after, sorted.
func (e rawEntity) types() []string {
	var out, other []string
	for _, t := range []string{metadata.QuotaEntityClientID, metadata.QuotaEntityUser, metadata.QuotaEntityIP} {
		if _, ok := e[t]; ok {
			out = append(out, t)
		}
	}
	for t := range e {
		if t != metadata.QuotaEntityClientID && t != metadata.QuotaEntityUser && t != metadata.QuotaEntityIP {
			other = append(other, t)
		}
	}
	slices.Sort(other)
	return append(out, other...)
}

// key identifies the entity (Kafka's ClientQuotaEntity equality).
func (e rawEntity) key() string {
	var b strings.Builder
	for _, t := range e.types() {
		fmt.Fprintf(&b, "%q=", t)
		if n := e[t]; n != nil {
			fmt.Fprintf(&b, "%q", *n)
		}
		b.WriteByte(';')
	}
	return b.String()
}

// String is Kafka's ClientQuotaEntity.toString.
func (e rawEntity) String() string {
	parts := make([]string, 0, len(e))
	for _, t := range e.types() {
		name := "null"
		if n := e[t]; n != nil {
			name = *n
		}
		parts = append(parts, t+"="+name)
	}
	return "ClientQuotaEntity(entries={" + strings.Join(parts, ", ") + "})"
}

// quotaResult is one entity's answer.
type quotaResult struct {
	entity rawEntity
	err    *kerr.Error
	msg    string
}

// AlterClientQuotas computes the records and response of an
// AlterClientQuotas request; validate_only computes the answers and keeps
// no record.
func (c *Controller) AlterClientQuotas(im *metadata.Image, req *kmsg.AlterClientQuotasRequest) ([]metadata.Record, *kmsg.AlterClientQuotasResponse) {
	var order []string
	results := map[string]*quotaResult{}
	set := func(e rawEntity, err *kerr.Error, msg string) {
		k := e.key()
		if _, ok := results[k]; !ok {
			order = append(order, k)
		}
		results[k] = &quotaResult{entity: e, err: err, msg: msg}
	}
	var records []metadata.Record
	for _, entry := range req.Entries {
		e := newRawEntity(entry.Entity)
		ops := map[string]*float64{}
		var keys []string
		for _, op := range entry.Ops {
			if _, dup := ops[op.Key]; dup {
				set(e, kerr.InvalidRequest, fmt.Sprintf("Duplicate quota key %s not updating quota for this entity %s", op.Key, e))
				continue
			}
			var v *float64
			if !op.Remove {
				v = &op.Value
			}
			ops[op.Key] = v
			keys = append(keys, op.Key)
		}
		// Kafka answers an entity seen before in the request, or one with a
		// duplicate key, with this; the earlier alteration's records stay.
		if _, seen := results[e.key()]; seen {
			set(e, kerr.InvalidRequest, "Ignoring duplicate entity "+e.String())
			continue
		}
		recs, err, msg := alterQuotaEntity(im, e, keys, ops)
		set(e, err, msg)
		records = append(records, recs...)
	}
	if len(records) > MaxRecordsPerOperation {
		// Kafka's bounded record list fails the whole operation.
		for _, r := range results {
			r.err, r.msg = kerr.UnknownServerError, ""
		}
		records = nil
	}
	resp := kmsg.NewPtrAlterClientQuotasResponse()
	resp.Version = req.Version
	for _, k := range order {
		resp.Entries = append(resp.Entries, quotaResponseEntry(results[k]))
	}
	if req.ValidateOnly {
		return nil, resp
	}
	return records, resp
}

func quotaResponseEntry(r *quotaResult) kmsg.AlterClientQuotasResponseEntry {
	out := kmsg.NewAlterClientQuotasResponseEntry()
	if r.err != nil {
		out.ErrorCode, out.ErrorMessage = errMessage(r.err, r.msg)
	}
	for _, t := range r.entity.types() {
		ent := kmsg.NewAlterClientQuotasResponseEntryEntity()
		ent.Type, ent.Name = t, r.entity[t]
		out.Entity = append(out.Entity, ent)
	}
	return out
}

// alterQuotaEntity validates one entity's alteration and returns its
// records: nothing when any key is refused.
func alterQuotaEntity(im *metadata.Image, raw rawEntity, keys []string, ops map[string]*float64) ([]metadata.Record, *kerr.Error, string) {
	entity, err, msg := validateQuotaEntity(raw)
	if err != nil {
		return nil, err, msg
	}
	valid := userClientQuotaKeys
	if entity.IP.Set {
		valid = ipQuotaKeys
	}
	current := im.ClientQuotas(entity)
	var recs []metadata.Record
	for _, k := range keys {
		v := ops[k]
		if v == nil {
			if _, ok := current[k]; ok {
				recs = append(recs, &metadata.ClientQuotaRecord{Entity: entity, Key: k, Remove: true})
			}
			continue
		}
		if msg := validateQuotaValue(valid, k, *v); msg != "" {
			return nil, kerr.InvalidRequest, msg
		}
		if old, ok := current[k]; !ok || old != *v {
			recs = append(recs, &metadata.ClientQuotaRecord{Entity: entity, Key: k, Value: *v})
		}
	}
	return recs, nil, ""
}

// validateQuotaEntity checks the entity's types and names and their
// combination, as Kafka's validateEntity and configKeysForEntityType.
func validateQuotaEntity(raw rawEntity) (metadata.QuotaEntity, *kerr.Error, string) {
	if len(raw) == 0 {
		return metadata.QuotaEntity{}, kerr.InvalidRequest, "Invalid empty client quota entity"
	}
	parts := make([]metadata.QuotaEntityPart, 0, len(raw))
	for _, t := range raw.types() {
		switch t {
		case metadata.QuotaEntityUser, metadata.QuotaEntityClientID, metadata.QuotaEntityIP:
		default:
			return metadata.QuotaEntity{}, kerr.InvalidRequest, "Unhandled client quota entity type: " + t
		}
		if n := raw[t]; n != nil && *n == "" {
			return metadata.QuotaEntity{}, kerr.InvalidRequest, "Empty " + t + " not supported"
		}
		parts = append(parts, metadata.QuotaEntityPart{Type: t, Name: raw[t]})
	}
	entity, err := metadata.QuotaEntityFromParts(parts)
	if err != nil {
		return metadata.QuotaEntity{}, kerr.InvalidRequest, err.Error()
	}
	if entity.IP.Set {
		if entity.User.Set || entity.ClientID.Set {
			return metadata.QuotaEntity{}, kerr.InvalidRequest, "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId"
		}
		// Kafka also accepts a host name it can resolve; the controller
		// resolves nothing, so only addresses pass.
		if ip := entity.IP; !ip.Default && !isIPv4(ip.Name) && !isIPv6(ip.Name) {
			return metadata.QuotaEntity{}, kerr.InvalidRequest, ip.Name + " is not a valid IP or resolvable host."
		}
	}
	return entity, nil, ""
}

// validateQuotaValue is Kafka's validateQuotaKeyValue: "" when valid.
func validateQuotaValue(valid map[string]quotaKeyType, key string, v float64) string {
	typ, ok := valid[key]
	switch {
	case !ok:
		return "Invalid configuration key " + key
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "Quota " + key + " must be a finite number"
	case v <= 0:
		return "Quota " + key + " must be greater than 0"
	}
	switch typ {
	case quotaLong:
		if v > math.MaxInt64 {
			return "Proposed value for " + key + " is too large for a LONG."
		}
	case quotaInt:
		if v > math.MaxInt32 {
			return "Proposed value for " + key + " is too large for an INT."
		}
	default:
		return ""
	}
	if math.Abs(math.Mod(v, 1)) > 1e-6 {
		return key + " cannot be a fractional value."
	}
	return ""
}
