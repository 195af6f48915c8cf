package quota

import "github.com/sluice-io/sluice/internal/metadata"

// Kind is a quota type: which key of the client quota records it enforces.
type Kind int

const (
	Produce Kind = iota
	Fetch
	Request
	ControllerMutation
	numKinds
)

// Key is the client quota record key of the kind.
func (k Kind) Key() string {
	switch k {
	case Produce:
		return metadata.QuotaProducerByteRate
	case Fetch:
		return metadata.QuotaConsumerByteRate
	case Request:
		return metadata.QuotaRequestPercentage
	default:
		return metadata.QuotaControllerMutationRate
	}
}

// String is Kafka's QuotaType name, the sensors' group.
func (k Kind) String() string {
	switch k {
	case Produce:
		return "Produce"
	case Fetch:
		return "Fetch"
	case Request:
		return "Request"
	default:
		return "ControllerMutation"
	}
}

// Quota types enabled, Kafka's QuotaTypes bits: which shapes of entity
// have a quota, so a request's sensor can be keyed by the only shape in
// use without walking the precedence.
const (
	clientIDEnabled     = 1
	userEnabled         = 2
	userClientIDEnabled = 4
)

// Tags name a sensor as Kafka's quota metric tags do: the user and the
// client id a quota applies to, "" when the quota does not key on it.
// Connections whose requests resolve to the same tags share one rate.
type Tags struct {
	User     string
	ClientID string
}

// Table is the quotas of one kind by entity (users and client ids; ip
// entities are connection quotas, not client quotas). It is immutable.
type Table struct {
	quotas  map[metadata.QuotaEntity]float64
	enabled int
}

// NewTable collects kind's quotas from an image; a nil image has none.
func NewTable(img *metadata.Image, kind Kind) *Table {
	t := &Table{quotas: map[metadata.QuotaEntity]float64{}}
	if img == nil {
		return t
	}
	key := kind.Key()
	for _, e := range img.QuotaEntities() {
		if e.IP.Set {
			continue
		}
		v, ok := img.ClientQuota(e, key)
		if !ok {
			continue
		}
		t.quotas[e] = v
		switch {
		case e.User.Set && e.ClientID.Set:
			t.enabled |= userClientIDEnabled
		case e.User.Set:
			t.enabled |= userEnabled
		default:
			t.enabled |= clientIDEnabled
		}
	}
	return t
}

// Enabled reports whether any quota of the kind exists.
func (t *Table) Enabled() bool { return t.enabled != 0 }

func (t *Table) has(user, client metadata.QuotaEntityName) bool {
	_, ok := t.quotas[metadata.QuotaEntity{User: user, ClientID: client}]
	return ok
}

var none metadata.QuotaEntityName

// Tags is DefaultQuotaCallback.quotaMetricTags: the tags of the most
// specific entity with a quota for (user, clientID), in Kafka's order
// /users/<u>/clients/<c>, /users/<u>/clients/<default>, /users/<u>,
// /users/<default>/clients/<c>, /users/<default>/clients/<default>,
// /users/<default>, /clients/<c>, /clients/<default>.
func (t *Table) Tags(user, clientID string) Tags {
	switch t.enabled {
	case 0, clientIDEnabled:
		return Tags{ClientID: clientID}
	case userEnabled:
		return Tags{User: user}
	case userClientIDEnabled:
		return Tags{User: user, ClientID: clientID}
	}
	u, c, du, dc := metadata.QuotaName(user), metadata.QuotaName(clientID), metadata.QuotaDefault(), metadata.QuotaDefault()
	switch {
	case t.has(u, c), t.has(u, dc):
		return Tags{User: user, ClientID: clientID}
	case t.has(u, none):
		return Tags{User: user}
	case t.has(du, c), t.has(du, dc):
		return Tags{User: user, ClientID: clientID}
	case t.has(du, none):
		return Tags{User: user}
	}
	return Tags{ClientID: clientID}
}

// Limit is DefaultQuotaCallback.quotaLimit: the quota of a sensor's tags,
// ok false when none applies (unlimited).
func (t *Table) Limit(tags Tags) (float64, bool) {
	get := func(user, client metadata.QuotaEntityName) (float64, bool) {
		v, ok := t.quotas[metadata.QuotaEntity{User: user, ClientID: client}]
		return v, ok
	}
	u, c, d := metadata.QuotaName(tags.User), metadata.QuotaName(tags.ClientID), metadata.QuotaDefault()
	var order [][2]metadata.QuotaEntityName
	switch {
	case tags.User != "" && tags.ClientID != "":
		order = [][2]metadata.QuotaEntityName{{u, c}, {u, d}, {d, c}, {d, d}}
	case tags.User != "":
		order = [][2]metadata.QuotaEntityName{{u, none}, {d, none}}
	case tags.ClientID != "":
		order = [][2]metadata.QuotaEntityName{{none, c}, {none, d}}
	}
	for _, o := range order {
		if v, ok := get(o[0], o[1]); ok {
			return v, true
		}
	}
	return 0, false
}

// Resolve is the quota that applies to a request of user and clientID:
// its sensor's tags and limit.
func (t *Table) Resolve(user, clientID string) (Tags, float64, bool) {
	tags := t.Tags(user, clientID)
	v, ok := t.Limit(tags)
	return tags, v, ok
}
