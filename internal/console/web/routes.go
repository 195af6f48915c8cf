package web

import (
	"io/fs"
	"net/http"
)

// pageFunc serves a GET page for a session that may use the cluster.
type pageFunc func(w http.ResponseWriter, r *http.Request, s *session) error

// actionFunc serves a write (POST): the CSRF token and read-only mode are
// checked before it runs. r.Form is parsed (bounded, see maxFormBytes).
type actionFunc func(w http.ResponseWriter, r *http.Request, s *session) error

// maxFormBytes bounds a posted form (a produced message's value included).
const maxFormBytes = 2 << 20

// router registers the console's routes on a mux. Routes never use
// /metrics, /healthz, /readyz or /debug/: the console may share an address
// with the metrics listener.
type router struct {
	c   *Console
	mux *http.ServeMux
}

// page registers a GET page ("GET /topics/{topic}").
func (rt router) page(pattern string, h pageFunc) {
	rt.mux.HandleFunc("GET "+pattern, rt.c.withSession(func(w http.ResponseWriter, r *http.Request, s *session) {
		if err := h(w, r, s); err != nil {
			rt.c.renderError(w, s, err)
		}
	}))
}

// action registers a POST write action, refused in read-only mode and
// without the session's CSRF token.
func (rt router) action(pattern string, h actionFunc) {
	rt.mux.HandleFunc("POST "+pattern, rt.c.withSession(func(w http.ResponseWriter, r *http.Request, s *session) {
		if err := rt.c.checkAction(w, r, s); err != nil {
			rt.c.renderError(w, s, err)
			return
		}
		if err := h(w, r, s); err != nil {
			rt.c.renderError(w, s, err)
		}
	}))
}

// routes builds the console's handler. Each page set registers its own
// routes from its own file; a new set adds one line here.
func (c *Console) routes() http.Handler {
	rt := router{c: c, mux: http.NewServeMux()}
	static, _ := fs.Sub(staticFS, "static")
	rt.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	rt.mux.HandleFunc("GET /login", c.loginPage)
	rt.mux.HandleFunc("POST /login", c.login)
	rt.mux.HandleFunc("POST /logout", c.logout)
	c.clusterRoutes(rt)
	c.messageRoutes(rt)
	rt.mux.HandleFunc("/", c.notFound)
	if c.opts.LoopbackHosts {
		return c.loopbackOnly(rt.mux)
	}
	return rt.mux
}

// clusterRoutes are the overview, brokers and topics pages.
func (c *Console) clusterRoutes(rt router) {
	rt.page("/{$}", c.overviewPage)
	rt.page("/brokers", c.brokersPage)
	rt.page("/brokers/{id}", c.brokerPage)
	rt.page("/topics", c.topicsPage)
	rt.action("/topics", c.createTopic)
	rt.page("/topics/{topic}", c.topicPage)
	rt.page("/topics/{topic}/delete", c.deleteTopicPage)
	rt.action("/topics/{topic}/delete", c.deleteTopic)
	rt.action("/topics/{topic}/configs", c.alterTopicConfigs)
}

// notFound is every path no route takes.
func (c *Console) notFound(w http.ResponseWriter, r *http.Request) {
	c.renderError(w, c.sessions.fromRequest(r), userError(http.StatusNotFound, "No page at %s.", r.URL.Path))
}
