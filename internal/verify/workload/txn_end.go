package workload

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/verify/history"
)

// txnEnd is what ending a transaction needs to know of it.
type txnEnd struct {
	txn   string
	begin history.Op
	// flushed: every record left the client (Flush returned nil).
	flushed bool
	// why is the reason it is aborted.
	why string
}

// commit asks to commit: TxnCommit on success; a commit kgo did not
// attempt (kerr.OperationNotAttempted: the producer id failed first) is
// aborted instead; any other error leaves the outcome unknown (Info with
// Txn), and the abort that follows (kgo's documented retry) only resets
// the client.
func (p *txnProducer) commit(cl *kgo.Client, e txnEnd) {
	ctx, cancel := context.WithTimeout(context.Background(), txnEndTimeout)
	defer cancel()
	err := cl.EndTransaction(ctx, kgo.TryCommit)
	switch {
	case err == nil:
		p.rec.Record(p.endOp(history.TxnCommit, e))
		return
	case errors.Is(err, kerr.OperationNotAttempted):
		e.why = "the commit was not attempted: " + err.Error()
		p.abort(cl, e)
		return
	}
	op := p.endOp(history.Info, e)
	op.Err = err.Error()
	op.Detail = "commit outcome unknown"
	p.rec.Record(op)
	actx, acancel := context.WithTimeout(context.Background(), txnEndTimeout)
	defer acancel()
	if err := cl.EndTransaction(actx, kgo.TryAbort); err != nil {
		p.cfg.Log.Warn("txn workload: abort after an unknown commit failed; replacing the client",
			"process", p.process, "txn", e.txn, "err", err)
		p.closeClient()
	}
}

// abort aborts a transaction whose commit was never asked for, so it is
// recorded TxnAbort whatever the abort's answer: if the abort fails (Err
// set), the client is replaced and the coordinator aborts the
// transaction on its timeout or when the new client fences this one.
func (p *txnProducer) abort(cl *kgo.Client, e txnEnd) {
	ctx, cancel := context.WithTimeout(context.Background(), txnEndTimeout)
	defer cancel()
	var err error
	if !e.flushed {
		// Records still buffered must not join the next transaction.
		err = cl.AbortBufferedRecords(ctx)
	}
	if err == nil {
		err = cl.EndTransaction(ctx, kgo.TryAbort)
	}
	op := p.endOp(history.TxnAbort, e)
	op.Detail = e.why
	if err != nil {
		op.Err = err.Error()
		op.Detail += "; the abort failed, the client is replaced (the coordinator aborts it)"
		p.closeClient()
	}
	p.rec.Record(op)
}

func (p *txnProducer) endOp(k history.Kind, e txnEnd) history.Op {
	return history.Op{Kind: k, Process: p.process, Topic: p.cfg.Topic, Offset: -1, Txn: e.txn,
		Latency: p.cfg.Clock.Now().Sub(p.rec.Start().Add(e.begin.Time))}
}
