package cluster

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sluice-io/sluice/internal/commitlog/logdir"
	"github.com/sluice-io/sluice/internal/freeport"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/netfault"
	"github.com/sluice-io/sluice/internal/vfs"
)

// interBrokerListener carries replication through the fault proxy; clients
// keep the direct PLAINTEXT listener.
const interBrokerListener = "INTERNAL"

// member is one node's fixed shape: where it listens and keeps its files.
type member struct {
	id int32
	// client, controller, internal and metrics are the node's own
	// listeners; proxyController and proxyInternal are the proxy's
	// addresses for the other nodes to reach its controller and internal
	// listeners through.
	client, controller, internal, metrics string
	proxyController, proxyInternal        string
	logDir, logFile, clockFile            string
}

// layout draws free ports and a cluster id, formats every node's log dir
// under dir, and opens the proxy's listeners.
func layout(dir string, nodes int, proxy *netfault.Proxy) (string, []*member, error) {
	id, err := kafka.RandomUUID()
	if err != nil {
		return "", nil, fmt.Errorf("draw a cluster id: %w", err)
	}
	ports, err := freePorts(4 * nodes)
	if err != nil {
		return "", nil, err
	}
	members := make([]*member, nodes)
	for i := range members {
		name := "node-" + strconv.Itoa(i+1)
		m := &member{
			id:         int32(i + 1),
			client:     hostPort(ports[4*i]),
			controller: hostPort(ports[4*i+1]),
			internal:   hostPort(ports[4*i+2]),
			metrics:    hostPort(ports[4*i+3]),
			logDir:     filepath.Join(dir, name),
			logFile:    filepath.Join(dir, name+".log"),
			clockFile:  filepath.Join(dir, name+".clock"),
		}
		if err := logdir.Format(vfs.Default, []string{m.logDir}, id.String(), m.id, false); err != nil {
			return "", nil, fmt.Errorf("format node %d: %w", m.id, err)
		}
		if m.proxyController, err = proxy.Listen(i, m.controller); err != nil {
			return "", nil, err
		}
		if m.proxyInternal, err = proxy.Listen(i, m.internal); err != nil {
			return "", nil, err
		}
		members[i] = m
	}
	return id.String(), members, nil
}

func hostPort(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// properties are node i's server.properties: every voter is reached
// through the proxy, replicas fetch through it (INTERNAL), clients come
// directly (PLAINTEXT); overrides win over the cluster's own keys except
// the ones that wire the listeners.
func properties(members []*member, i int, overrides map[string]string) map[string]string {
	n := len(members)
	m := members[i]
	voters := make([]string, n)
	for j, o := range members {
		voters[j] = fmt.Sprintf("%d@%s", o.id, o.proxyController)
	}
	props := map[string]string{
		// Kafka's defaults for the internal topics (3, min ISR 2) need 3
		// brokers; fewer nodes would never create them.
		"offsets.topic.replication.factor":         strconv.Itoa(min(n, 3)),
		"transaction.state.log.replication.factor": strconv.Itoa(min(n, 3)),
		"transaction.state.log.min.isr":            strconv.Itoa(min(n, 2)),
	}
	for k, v := range overrides {
		props[k] = v
	}
	for k, v := range map[string]string{
		"process.roles":                  "broker,controller",
		"node.id":                        strconv.Itoa(int(m.id)),
		"controller.quorum.voters":       strings.Join(voters, ","),
		"controller.listener.names":      "CONTROLLER",
		"listeners":                      "PLAINTEXT://" + m.client + ",CONTROLLER://" + m.controller + "," + interBrokerListener + "://" + m.internal,
		"advertised.listeners":           "PLAINTEXT://" + m.client + "," + interBrokerListener + "://" + m.proxyInternal,
		"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT," + interBrokerListener + ":PLAINTEXT",
		"inter.broker.listener.name":     interBrokerListener,
		"log.dirs":                       m.logDir,
		"sluice.metrics.listener":        m.metrics,
	} {
		props[k] = v
	}
	return props
}

// freePorts finds n distinct free ports below the ephemeral range
// (freeport.Ports).
func freePorts(n int) ([]int, error) { return freeport.Ports(n) }
