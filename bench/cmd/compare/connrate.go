package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// connRateConfig is one new-connection-rate run: Workers clients, each opening connections
// one after another to Addr (TLS handshake, ApiVersions, and with SCRAM set SaslHandshake
// and SaslAuthenticate), then closing them.
type connRateConfig struct {
	Addr    string
	TLS     *tls.Config
	SCRAM   *scram.Auth // nil: TLS and ApiVersions only
	Workers int
	Warm    time.Duration // connections made during this time are not counted
	Measure time.Duration
}

// connRateRun is what a run measured: connections completed inside the measurement window
// and the broker CPU over it.
type connRateRun struct {
	Conns      int64
	Seconds    float64
	CPUSeconds float64
}

func (r connRateRun) perSecond() float64 { return float64(r.Conns) / r.Seconds }

// cpuMsPerConn is broker CPU milliseconds per connection completed.
func (r connRateRun) cpuMsPerConn() float64 { return r.CPUSeconds * 1e3 / float64(r.Conns) }

// runConnRate makes connections for Warm, then counts those completed within Measure,
// sampling the broker's CPU at the window's edges. Any failed connection fails the run:
// a benchmark that drops connections measures nothing.
func runConnRate(ctx context.Context, cfg connRateConfig, brokerPIDs []int) (connRateRun, error) {
	if err := connWindow(ctx, cfg, cfg.Warm, nil); err != nil {
		return connRateRun{}, fmt.Errorf("warm-up: %w", err)
	}
	cpu0, err := sumCPUSeconds(brokerPIDs)
	if err != nil {
		return connRateRun{}, err
	}
	var done atomic.Int64
	t0 := time.Now()
	if err := connWindow(ctx, cfg, cfg.Measure, &done); err != nil {
		return connRateRun{}, err
	}
	elapsed := time.Since(t0).Seconds()
	cpu1, err := sumCPUSeconds(brokerPIDs)
	if err != nil {
		return connRateRun{}, err
	}
	if done.Load() == 0 {
		return connRateRun{}, fmt.Errorf("no connection completed in %s", cfg.Measure)
	}
	return connRateRun{Conns: done.Load(), Seconds: elapsed, CPUSeconds: cpu1 - cpu0}, nil
}

// connWindow runs the workers until d has passed; each completed connection is counted in
// done (when not nil). Connections in flight at the end finish, and count, so the window's
// elapsed time is measured by the caller after every worker has returned.
func connWindow(ctx context.Context, cfg connRateConfig, d time.Duration, done *atomic.Int64) error {
	end := time.Now().Add(d)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		failed   int
	)
	for w := range max(cfg.Workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) && ctx.Err() == nil {
				if err := oneConnection(ctx, cfg, fmt.Sprintf("bench-connrate-%d", w)); err != nil {
					mu.Lock()
					failed++
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				if done != nil {
					done.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return fmt.Errorf("%d of %d workers stopped on a failed connection, the first: %w", failed, cfg.Workers, firstErr)
	}
	return ctx.Err()
}

// oneConnection is what a client does before its first real request on a new connection:
// the TCP connect, the TLS handshake, ApiVersions and, with SCRAM, the SASL exchange (as
// the Java client: SaslHandshake v1, then SaslAuthenticate until the server-final message).
func oneConnection(ctx context.Context, cfg connRateConfig, clientID string) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("dial %s: %w", cfg.Addr, err)
	}
	defer raw.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = raw.SetDeadline(dl)
	}
	conn := tls.Client(raw, cfg.TLS)
	if err := conn.HandshakeContext(ctx); err != nil {
		return fmt.Errorf("TLS handshake with %s: %w", cfg.Addr, err)
	}
	kc := &kafkaConn{w: conn, r: bufio.NewReader(conn), f: kmsg.NewRequestFormatter(kmsg.FormatterClientID(clientID))}
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	av.ClientSoftwareName = "sluice-bench-connrate"
	av.ClientSoftwareVersion = "1"
	avResp := kmsg.NewPtrApiVersionsResponse()
	if err := kc.roundTrip(av, avResp); err != nil {
		return err
	}
	if avResp.ErrorCode != 0 {
		return fmt.Errorf("ApiVersions: error code %d", avResp.ErrorCode)
	}
	if cfg.SCRAM != nil {
		return kc.authenticate(ctx, cfg.SCRAM.AsSha256Mechanism(), cfg.Addr)
	}
	return nil
}

// kafkaConn sends one request at a time on a connection and reads its response.
type kafkaConn struct {
	w    io.Writer
	r    *bufio.Reader
	f    *kmsg.RequestFormatter
	corr int32
	buf  []byte
}

func (c *kafkaConn) roundTrip(req kmsg.Request, resp kmsg.Response) error {
	name := kmsg.NameForKey(req.Key())
	c.corr++
	c.buf = c.f.AppendRequest(c.buf[:0], req, c.corr)
	if _, err := c.w.Write(c.buf); err != nil {
		return fmt.Errorf("%s: write: %w", name, err)
	}
	var size [4]byte
	if _, err := io.ReadFull(c.r, size[:]); err != nil {
		return fmt.Errorf("%s: read response: %w", name, err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c.r, body); err != nil {
		return fmt.Errorf("%s: read response: %w", name, err)
	}
	rd := kbin.Reader{Src: body}
	if corr := rd.Int32(); corr != c.corr {
		return fmt.Errorf("%s: correlation id %d, want %d", name, corr, c.corr)
	}
	resp.SetVersion(req.GetVersion())
	// Flexible responses have header v1 (tagged fields), except ApiVersions' (always v0).
	if resp.IsFlexible() && req.Key() != kmsg.ApiVersions.Int16() {
		kmsg.SkipTags(&rd)
	}
	if !rd.Ok() {
		return fmt.Errorf("%s: response header cut short (%d bytes)", name, len(body))
	}
	if err := resp.ReadFrom(rd.Src); err != nil {
		return fmt.Errorf("%s: decode response: %w", name, err)
	}
	return nil
}

// authenticate runs SaslHandshake v1 and SaslAuthenticate v2 with mech until it is done.
func (c *kafkaConn) authenticate(ctx context.Context, mech sasl.Mechanism, addr string) error {
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version = 1
	hs.Mechanism = mech.Name()
	hsResp := kmsg.NewPtrSASLHandshakeResponse()
	if err := c.roundTrip(hs, hsResp); err != nil {
		return err
	}
	if hsResp.ErrorCode != 0 {
		return fmt.Errorf("SaslHandshake %s: error code %d (enabled: %v)", mech.Name(), hsResp.ErrorCode, hsResp.SupportedMechanisms)
	}
	session, msg, err := mech.Authenticate(ctx, addr)
	if err != nil {
		return fmt.Errorf("SCRAM: %w", err)
	}
	for {
		auth := kmsg.NewPtrSASLAuthenticateRequest()
		auth.Version = 2
		auth.SASLAuthBytes = msg
		authResp := kmsg.NewPtrSASLAuthenticateResponse()
		if err := c.roundTrip(auth, authResp); err != nil {
			return err
		}
		if authResp.ErrorCode != 0 {
			return fmt.Errorf("SaslAuthenticate: error code %d: %s", authResp.ErrorCode, deref(authResp.ErrorMessage))
		}
		var done bool
		if done, msg, err = session.Challenge(authResp.SASLAuthBytes); err != nil {
			return fmt.Errorf("SCRAM: %w", err)
		}
		if done {
			return nil
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
