package quorum

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// stepRecorder is a LocalVoter that hands received messages to a channel.
type stepRecorder chan *raftpb.Message

func (r stepRecorder) Step(m *raftpb.Message)   { r <- m }
func (stepRecorder) ReportUnreachable(int32)    {}
func (stepRecorder) ReportSnapshot(int32, bool) {}

// selfSigned is a certificate for 127.0.0.1 that is its own root.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "voter"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

// With a TLS dial and TLS listeners (a CONTROLLER listener that is SSL),
// raft messages flow over mutual TLS; a plaintext dial is refused.
func TestTCPTransportOverTLS(t *testing.T) {
	cert, pool := selfSigned(t)
	serverConf := &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
	dialer := &tls.Dialer{Config: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool}}
	addrs := map[int32]string{}
	lns := map[int32]net.Listener{}
	for id := int32(1); id <= 2; id++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns[id], addrs[id] = tls.NewListener(ln, serverConf), ln.Addr().String()
	}
	received := stepRecorder(make(chan *raftpb.Message, 4))
	transports := map[int32]*TCPTransport{}
	for id := int32(1); id <= 2; id++ {
		tr, err := NewTCPTransport(TCPOptions{ClusterID: "c1", NodeID: id, Voters: addrs, Dial: dialer.DialContext,
			BackoffMin: 5 * time.Millisecond, BackoffMax: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		tr.Start(received)
		tr.Serve(lns[id])
		t.Cleanup(tr.Stop)
		transports[id] = tr
	}
	transports[1].Send([]*raftpb.Message{{Type: raftpb.MsgHeartbeat.Enum(), From: proto.Uint64(RaftID(1)),
		To: proto.Uint64(RaftID(2)), Term: proto.Uint64(7)}})
	select {
	case m := <-received:
		if m.GetTerm() != 7 || m.GetFrom() != RaftID(1) {
			t.Fatalf("received %v", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no message over TLS")
	}

	plain, err := NewTCPTransport(TCPOptions{ClusterID: "c1", NodeID: 1, Voters: addrs, DialTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	p := plain.peers[RaftID(2)]
	if _, err := p.dial(); err == nil {
		t.Fatal("a plaintext raft connection was accepted by a TLS listener")
	}
}
