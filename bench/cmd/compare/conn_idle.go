package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// idleConn is one client connection that has done what a client does first (ApiVersions,
// then Metadata for its topic) and then sends nothing, as an idle producer or consumer.
type idleConn struct {
	conn net.Conn
	kc   *kafkaConn
}

// idleConns are the connections one session holds open.
type idleConns struct {
	conns []*idleConn
}

// openIdleConns opens n connections to addr with workers goroutines, each completing the
// handshake before it is kept; any failure closes them all and fails the phase, since a
// broker that refuses some would be measured with fewer than asked.
func openIdleConns(ctx context.Context, addr, topic string, n, workers int) (*idleConns, error) {
	out := &idleConns{conns: make([]*idleConn, 0, n)}
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				c, err := openIdleConn(ctx, addr, topic, fmt.Sprintf("bench-idle-%d", i))
				mu.Lock()
				if err != nil && first == nil {
					first = err
				}
				if err == nil {
					out.conns = append(out.conns, c)
				}
				mu.Unlock()
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	if first != nil {
		out.close()
		return nil, fmt.Errorf("opening %d idle connections: %w", n, first)
	}
	return out, nil
}

// openIdleConn dials addr and runs ApiVersions v3 and Metadata (the version both sides
// know, at most v12) for topic, as a client's first requests.
func openIdleConn(ctx context.Context, addr, topic, clientID string) (*idleConn, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	dl, _ := ctx.Deadline()
	_ = conn.SetDeadline(dl)
	c := &idleConn{conn: conn, kc: &kafkaConn{w: conn, r: bufio.NewReaderSize(conn, 512), f: kmsg.NewRequestFormatter(kmsg.FormatterClientID(clientID))}}
	if err := c.handshake(topic); err != nil {
		conn.Close()
		return nil, err
	}
	// Silent from here on: no deadline, the broker's connections.max.idle.ms decides.
	_ = conn.SetDeadline(time.Time{})
	return c, nil
}

func (c *idleConn) handshake(topic string) error {
	av, err := c.apiVersions()
	if err != nil {
		return err
	}
	meta := kmsg.NewPtrMetadataRequest()
	meta.Version = 12
	for _, k := range av.ApiKeys {
		if k.ApiKey == kmsg.Metadata.Int16() {
			meta.Version = min(meta.Version, k.MaxVersion)
		}
	}
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	meta.Topics = []kmsg.MetadataRequestTopic{mt}
	resp := kmsg.NewPtrMetadataResponse()
	if err := c.kc.roundTrip(meta, resp); err != nil {
		return err
	}
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
		return fmt.Errorf("Metadata v%d for %s: %d topics, want 1 without error", meta.Version, topic, len(resp.Topics))
	}
	return nil
}

func (c *idleConn) apiVersions() (*kmsg.ApiVersionsResponse, error) {
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName = "sluice-bench-idle"
	req.ClientSoftwareVersion = "1"
	resp := kmsg.NewPtrApiVersionsResponse()
	if err := c.kc.roundTrip(req, resp); err != nil {
		return nil, err
	}
	if resp.ErrorCode != 0 {
		return nil, fmt.Errorf("ApiVersions: error code %d", resp.ErrorCode)
	}
	return resp, nil
}

// alive asks every connection for ApiVersions once more: the count that answered, so a
// broker that dropped idle connections during the runs is seen, not assumed away.
func (ic *idleConns) alive() int {
	var n int
	for _, c := range ic.conns {
		_ = c.conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.apiVersions(); err == nil {
			n++
		}
	}
	return n
}

func (ic *idleConns) close() {
	for _, c := range ic.conns {
		c.conn.Close()
	}
}

// raiseNoFileLimit lifts this process's soft RLIMIT_NOFILE to at least need (the idle
// connections, the producers' and consumer's, and some to spare), up to the hard limit.
func raiseNoFileLimit(need uint64) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("getrlimit: %w", err)
	}
	soft, err := noFileTarget(lim.Cur, lim.Max, need)
	if err != nil || soft == lim.Cur {
		return err
	}
	lim.Cur = soft
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("setrlimit nofile %d: %w", soft, err)
	}
	return nil
}

// noFileTarget is the soft limit to set: unchanged if it already allows need, need if the
// hard limit allows it, otherwise an error (the phase would fail at some connection).
func noFileTarget(cur, hard, need uint64) (uint64, error) {
	if cur >= need {
		return cur, nil
	}
	if hard < need {
		return 0, fmt.Errorf("open files: the hard limit %d is below the %d the connections phase needs", hard, need)
	}
	return need, nil
}
