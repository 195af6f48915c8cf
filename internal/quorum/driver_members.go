package quorum

import (
	"context"
	"time"

	"github.com/sluice-io/sluice/internal/kafka"
)

// AddVoter adds a voter to a dynamic quorum (Voter.AddVoter) and waits for
// the outcome; timeout bounds the new voter's catch-up.
func (d *Driver) AddVoter(ctx context.Context, m Member, timeout time.Duration) error {
	return d.change(ctx, func(v *Voter, done func(error)) { v.AddVoter(m, timeout, done) })
}

// RemoveVoter removes the voter (id, dir) (Voter.RemoveVoter).
func (d *Driver) RemoveVoter(ctx context.Context, id int32, dir kafka.UUID) error {
	return d.change(ctx, func(v *Voter, done func(error)) { v.RemoveVoter(id, dir, done) })
}

// UpdateVoter replaces a voter's endpoints (Voter.UpdateVoter).
func (d *Driver) UpdateVoter(ctx context.Context, m Member) error {
	return d.change(ctx, func(v *Voter, done func(error)) { v.UpdateVoter(m, done) })
}

// Membership is the applied membership of a dynamic quorum.
func (d *Driver) Membership() Membership {
	return Membership{Members: append([]Member(nil), d.Status().Members...)}
}

func (d *Driver) change(ctx context.Context, start func(*Voter, func(error))) error {
	res := make(chan error, 1)
	op := func(v *Voter) { start(v, func(err error) { res <- err }) }
	select {
	case d.opc <- op:
	case <-ctx.Done():
		return ctx.Err()
	case <-d.donec:
		return d.stoppedErr()
	}
	select {
	case err := <-res:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-d.donec:
		select {
		case err := <-res:
			return err
		default:
			return d.stoppedErr()
		}
	}
}
