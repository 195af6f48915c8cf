package node

import (
	"fmt"
	"log/slog"

	"github.com/sluice-io/sluice/internal/api"
	"github.com/sluice-io/sluice/internal/auth/acl"
)

// authorizer is the listeners' authorizer: Kafka's StandardAuthorizer over
// the published image's ACLs when authorizer.class.name names it, nil
// (everything allowed, as Kafka without an authorizer) otherwise.
func (n *Node) authorizer() (api.Authorizer, error) {
	s := n.cfg.Authorizer()
	if !s.Enabled {
		return nil, nil
	}
	users, err := acl.ParseSuperUsers(s.SuperUsers)
	if err != nil {
		return nil, fmt.Errorf("node: super.users: %w", err)
	}
	n.logger.Info("authorizer: StandardAuthorizer", slog.Any("super.users", users), slog.Bool("allow.everyone.if.no.acl.found", s.AllowIfNoACL))
	return acl.New(acl.Options{SuperUsers: users, AllowIfNoACL: s.AllowIfNoACL},
		func() acl.Bindings { return n.Image() }), nil
}
