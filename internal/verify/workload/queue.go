package workload

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/sluice-io/sluice/internal/verify/history"
)

// leaveTimeout bounds a member's clean leave.
const leaveTimeout = 10 * time.Second

// Queue runs cfg.Producers producers and cfg.Consumers classic members of
// cfg.Group until ctx is done, then drains the producers (every Send ends
// in Ack, Fail or Info) and makes the members leave. The topic must exist
// (CreateTopic).
func Queue(ctx context.Context, cfg Config, rec *history.Recorder) error {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return err
	}
	var cs []*Consumer
	for i := range cfg.Consumers {
		c, err := NewConsumer(cfg, fmt.Sprintf("consumer-%d", i+1), rec, false)
		if err != nil {
			for _, c := range cs {
				c.Client.Close()
			}
			return err
		}
		cs = append(cs, c)
	}
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Go(func() { c.Run(ctx) })
	}
	err := runProducers(ctx, cfg, rec)
	wg.Wait()
	for _, c := range cs {
		wg.Go(func() { c.Leave(leaveTimeout) })
	}
	wg.Wait()
	return err
}
