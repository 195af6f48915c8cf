package api

// Authorization as Kafka's KafkaApis asks it (AuthHelper): each handler
// asks its request's authorizer for the operation and resource Kafka checks
// and answers Kafka's error when refused. Without an authorizer
// (authorizer.class.name empty) everything is allowed, as in Kafka.

import (
	"net"
	"net/netip"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/auth"
	"github.com/sluice-io/sluice/internal/auth/acl"
	"github.com/sluice-io/sluice/internal/metadata"
)

// Authorizer decides actions (*acl.Authorizer over the published image).
type Authorizer interface {
	// Authorize is Kafka's authorize for one action on a literal name.
	Authorize(p auth.Principal, host string, op metadata.ACLOperation, t metadata.ACLResourceType, name string) bool
	// AuthorizeByResourceType is Kafka's authorizeByResourceType.
	AuthorizeByResourceType(p auth.Principal, host string, op metadata.ACLOperation, t metadata.ACLResourceType) bool
	// AuthorizedOperations is the KIP-430 bit field for a resource.
	AuthorizedOperations(p auth.Principal, host string, t metadata.ACLResourceType, name string) int32
}

// Resource types and operations under short names for the handlers.
const (
	resTopic   = metadata.ACLResourceTopic
	resGroup   = metadata.ACLResourceGroup
	resCluster = metadata.ACLResourceCluster
	resTxnID   = metadata.ACLResourceTransactionalID

	opRead            = metadata.ACLOpRead
	opWrite           = metadata.ACLOpWrite
	opCreate          = metadata.ACLOpCreate
	opDelete          = metadata.ACLOpDelete
	opAlter           = metadata.ACLOpAlter
	opDescribe        = metadata.ACLOpDescribe
	opClusterAction   = metadata.ACLOpClusterAction
	opDescribeConfigs = metadata.ACLOpDescribeConfigs
	opAlterConfigs    = metadata.ACLOpAlterConfigs
	opIdempotentWrite = metadata.ACLOpIdempotentWrite
)

// clusterName is the CLUSTER resource's one name.
const clusterName = metadata.ACLClusterName

// authorize reports whether the request's principal may perform op on the
// resource (true without an authorizer).
func (r *Request) authorize(op metadata.ACLOperation, t metadata.ACLResourceType, name string) bool {
	if r.authz == nil || r.Conn == nil {
		return true
	}
	return r.authz.Authorize(r.Conn.Principal, aclHost(r.Conn), op, t, name)
}

// authorizeCluster is authorize on the CLUSTER resource.
func (r *Request) authorizeCluster(op metadata.ACLOperation) bool {
	return r.authorize(op, resCluster, clusterName)
}

// authorizeByResourceType is Kafka's authorizeByResourceType for the
// request's principal.
func (r *Request) authorizeByResourceType(op metadata.ACLOperation, t metadata.ACLResourceType) bool {
	if r.authz == nil || r.Conn == nil {
		return true
	}
	return r.authz.AuthorizeByResourceType(r.Conn.Principal, aclHost(r.Conn), op, t)
}

// authorizedOperations is the KIP-430 field for a resource; without an
// authorizer it is all, the value each handler passes.
func (r *Request) authorizedOperations(t metadata.ACLResourceType, name string, all int32) int32 {
	if r.authz == nil || r.Conn == nil {
		return all
	}
	return r.authz.AuthorizedOperations(r.Conn.Principal, aclHost(r.Conn), t, name)
}

// hasAuthorizer reports whether an authorizer is configured (DescribeAcls
// and friends answer SECURITY_DISABLED without one, in Kafka).
func (r *Request) hasAuthorizer() bool { return r.authz != nil }

// filterAuthorized returns the names of names the principal may perform op
// on, as AuthHelper.filterByAuthorized.
func (r *Request) filterAuthorized(op metadata.ACLOperation, t metadata.ACLResourceType, names []string) map[string]bool {
	ok := make(map[string]bool, len(names))
	for _, n := range names {
		if _, seen := ok[n]; !seen {
			ok[n] = r.authorize(op, t, n)
		}
	}
	return ok
}

// aclHost is the client's address as Kafka's authorizer compares it
// (InetAddress.getHostAddress).
func aclHost(c *ConnState) string {
	switch a := c.RemoteAddr.(type) {
	case *net.TCPAddr:
		if ip, ok := netip.AddrFromSlice(a.IP); ok {
			return acl.HostAddress(ip.WithZone(a.Zone))
		}
	case nil:
		return ""
	}
	if ap, err := netip.ParseAddrPort(c.RemoteAddr.String()); err == nil {
		return acl.HostAddress(ap.Addr())
	}
	host, _, _ := net.SplitHostPort(c.RemoteAddr.String())
	return host
}

// topicCheck returns a cached check of op on topics by name, for handlers
// that authorize topic by topic.
func (r *Request) topicCheck(op metadata.ACLOperation) func(topic string) bool {
	cache := map[string]bool{}
	return func(topic string) bool {
		ok, seen := cache[topic]
		if !seen {
			ok = r.authorize(op, resTopic, topic)
			cache[topic] = ok
		}
		return ok
	}
}

// allowAll is the check of a request with no authorizer, for tests.
func allowAll(string) bool { return true }

// clusterRefusal is Kafka's authorizeClusterOperation: nil when the
// principal may perform op on the cluster, else the error the handler
// answers as it answers a failed request (CLUSTER_AUTHORIZATION_FAILED).
func (r *Request) clusterRefusal(op metadata.ACLOperation) error {
	if r.authorizeCluster(op) {
		return nil
	}
	return kerr.ClusterAuthorizationFailed
}
