package sluicetest

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/api"
	"github.com/sluice-io/sluice/internal/node"
)

// ControlFn sees a request and answers it (a response and handled=true),
// fails it by closing the client's connection (an error, handled=true),
// drops it (nil response, nil error, handled=true: nothing is sent back and
// the client's request times out) or passes it on to the node
// (handled=false). A response must be the request's type; its version is
// set to the request's.
type ControlFn func(kmsg.Request) (kmsg.Response, error, bool)

// controlFn is one registered control function; key -1 matches every key.
type controlFn struct {
	key int16
	fn  ControlFn
	// running is set while fn runs (SleepControl lets others run then),
	// so one function never runs for two requests at once.
	running bool
}

// control runs the control functions as franz-go's kfake does: one at a
// time across the cluster, in the order they were added, each once unless
// it calls KeepControl.
type control struct {
	// run serializes the functions; SleepControl releases it.
	run sync.Mutex
	// count is the number of registered functions, so requests skip run
	// when there are none.
	count atomic.Int32
	mu    sync.Mutex
	fns   []*controlFn
	// cur is the running function's state; set under run, atomic so a
	// call outside a control function reads nil without a race.
	cur atomic.Pointer[controlRun]
}

// controlRun is one call of a control function.
type controlRun struct {
	node       int32
	keep, drop bool
}

// A control function runs on the request's connection goroutine while no
// other control function runs, so it must not wait for another request to
// the cluster (a client call of its own, say) except through SleepControl.

// ControlKey adds fn for requests of API key key (kmsg.Produce, say) on
// every node: client requests and the nodes' own requests to each other
// (follower fetches, forwarded admin requests, broker heartbeats) alike;
// raft traffic between controllers is not a request of the broker API and
// is not seen. fn runs once, for the next such request, unless it calls
// KeepControl.
func (c *Cluster) ControlKey(key int16, fn ControlFn) { c.ctl.add(key, fn) }

// Control adds fn for requests of every key, as ControlKey.
func (c *Cluster) Control(fn ControlFn) { c.ctl.add(-1, fn) }

// KeepControl, called inside a control function, keeps it for later
// requests. Outside one it does nothing.
func (c *Cluster) KeepControl() {
	if cur := c.ctl.cur.Load(); cur != nil {
		cur.keep = true
	}
}

// DropControl, called inside a control function, removes it after this
// call even if it called KeepControl. Outside one it does nothing.
func (c *Cluster) DropControl() {
	if cur := c.ctl.cur.Load(); cur != nil {
		cur.drop = true
	}
}

// CurrentNode, called inside a control function, is the id of the node
// the request came to; -1 outside one.
func (c *Cluster) CurrentNode() int32 {
	if cur := c.ctl.cur.Load(); cur != nil {
		return cur.node
	}
	return -1
}

// SleepControl, called inside a control function, waits until wakeup
// returns while other control functions run for other requests; the
// request stays unanswered meanwhile. SleepControl(func() {
// time.Sleep(d) }) delays a request by d.
func (c *Cluster) SleepControl(wakeup func()) {
	cur := c.ctl.cur.Load()
	c.ctl.run.Unlock()
	defer func() {
		c.ctl.run.Lock()
		c.ctl.cur.Store(cur)
	}()
	wakeup()
}

func (ct *control) add(key int16, fn ControlFn) {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	ct.fns = append(ct.fns, &controlFn{key: key, fn: fn})
	ct.count.Add(1)
}

// hook is node id's request hook.
func (ct *control) hook(id int32) node.RequestHook {
	return func(_ context.Context, req *api.Request) (api.Response, bool) {
		if ct.count.Load() == 0 || req.Body == nil {
			return api.Response{}, false
		}
		return ct.intercept(id, req.Body)
	}
}

// intercept offers req to each matching function in turn until one
// handles it.
func (ct *control) intercept(id int32, req kmsg.Request) (api.Response, bool) {
	if len(ct.matching(req.Key())) == 0 {
		return api.Response{}, false // other keys never wait for a running function
	}
	ct.run.Lock()
	defer ct.run.Unlock()
	for _, f := range ct.matching(req.Key()) {
		resp, err, handled := ct.call(id, f, req)
		if !handled {
			continue
		}
		switch {
		case err != nil:
			return api.CloseConnection(err), true
		case resp == nil:
			return api.NoResponse(), true
		default:
			resp.SetVersion(req.GetVersion())
			return api.Reply(resp), true
		}
	}
	return api.Response{}, false
}

// matching are the functions for key that are not running, in order.
func (ct *control) matching(key int16) []*controlFn {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	var out []*controlFn
	for _, f := range ct.fns {
		if (f.key == key || f.key == -1) && !f.running {
			out = append(out, f)
		}
	}
	return out
}

// call runs f for req (the caller holds run) and removes f afterwards
// unless it kept itself.
func (ct *control) call(id int32, f *controlFn, req kmsg.Request) (kmsg.Response, error, bool) {
	ct.mu.Lock()
	if f.running || !ct.registered(f) {
		ct.mu.Unlock()
		return nil, nil, false // another request took it while we waited
	}
	f.running = true
	ct.mu.Unlock()
	run := &controlRun{node: id}
	ct.cur.Store(run)
	resp, err, handled := f.fn(req)
	ct.cur.Store(nil)
	ct.mu.Lock()
	defer ct.mu.Unlock()
	f.running = false
	if run.drop || !run.keep {
		ct.removeLocked(f)
	}
	return resp, err, handled
}

func (ct *control) registered(f *controlFn) bool {
	for _, g := range ct.fns {
		if g == f {
			return true
		}
	}
	return false
}

func (ct *control) removeLocked(f *controlFn) {
	for i, g := range ct.fns {
		if g == f {
			ct.fns = append(ct.fns[:i:i], ct.fns[i+1:]...)
			ct.count.Add(-1)
			return
		}
	}
}
