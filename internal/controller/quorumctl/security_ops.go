package quorumctl

// The security admin operations: SCRAM credentials, ACLs and client
// quotas, answered once this node's broker side has the result, as the
// other admin operations.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/metadata"
)

// AlterUserScramCredentials creates, replaces or deletes SCRAM credentials.
func (c *QuorumController) AlterUserScramCredentials(ctx context.Context, req *kmsg.AlterUserSCRAMCredentialsRequest) (*kmsg.AlterUserSCRAMCredentialsResponse, error) {
	return runOp(ctx, c, true, func(im *metadata.Image) ([]metadata.Record, *kmsg.AlterUserSCRAMCredentialsResponse) {
		return c.opts.Logic.AlterUserScramCredentials(im, req)
	})
}

// CreateAcls adds ACL bindings.
func (c *QuorumController) CreateAcls(ctx context.Context, req *kmsg.CreateACLsRequest) (*kmsg.CreateACLsResponse, error) {
	return runOp(ctx, c, true, func(im *metadata.Image) ([]metadata.Record, *kmsg.CreateACLsResponse) {
		return c.opts.Logic.CreateAcls(im, req)
	})
}

// DeleteAcls removes the ACL bindings that match filters.
func (c *QuorumController) DeleteAcls(ctx context.Context, req *kmsg.DeleteACLsRequest) (*kmsg.DeleteACLsResponse, error) {
	return runOp(ctx, c, true, func(im *metadata.Image) ([]metadata.Record, *kmsg.DeleteACLsResponse) {
		return c.opts.Logic.DeleteAcls(im, req)
	})
}

// AlterClientQuotas sets or removes client quotas.
func (c *QuorumController) AlterClientQuotas(ctx context.Context, req *kmsg.AlterClientQuotasRequest) (*kmsg.AlterClientQuotasResponse, error) {
	return runOp(ctx, c, true, func(im *metadata.Image) ([]metadata.Record, *kmsg.AlterClientQuotasResponse) {
		return c.opts.Logic.AlterClientQuotas(im, req)
	})
}
