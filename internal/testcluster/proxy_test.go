package testcluster

import "testing"

func TestNodeProxiesRewriteKeepsClientsDirect(t *testing.T) {
	np := &nodeProxies{voters: "1@127.0.0.1:7001", internal: []string{"127.0.0.1:6001"}, advertised: []string{"127.0.0.1:7002"}}
	props := (&Layout{Nodes: []NodeLayout{{ID: 1, Roles: "broker,controller", BrokerAddr: "127.0.0.1:5001",
		ControllerAddr: "127.0.0.1:5002"}}}).Properties(0)
	np.rewrite(0, props)
	want := map[string]string{
		"controller.quorum.voters":       "1@127.0.0.1:7001",
		"listeners":                      "PLAINTEXT://127.0.0.1:5001,CONTROLLER://127.0.0.1:5002,INTERNAL://127.0.0.1:6001",
		"advertised.listeners":           "PLAINTEXT://127.0.0.1:5001,INTERNAL://127.0.0.1:7002",
		"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,INTERNAL:PLAINTEXT",
		"inter.broker.listener.name":     "INTERNAL",
	}
	for k, v := range want {
		if props[k] != v {
			t.Errorf("%s = %q, want %q", k, props[k], v)
		}
	}
}
