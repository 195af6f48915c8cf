package console

import (
	"fmt"
	"net/http"
)

// healthz is the liveness probe: 200 while the process serves HTTP and is
// not shutting down. It takes no lock and does no I/O, so a probe stays
// fast under load.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	noStore(w)
	if s.draining.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "unhealthy: shutting down")
		return
	}
	if err := s.opts.Healthy(); err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "unhealthy: %v\n", err)
		return
	}
	fmt.Fprintln(w, "ok")
}

// readyz is the readiness probe: 200 "ready", or 503 with one line per
// unmet condition.
func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	noStore(w)
	unmet := s.opts.Ready()
	if s.draining.Load() {
		unmet = append([]string{"shutting down"}, unmet...)
	}
	if len(unmet) == 0 {
		fmt.Fprintln(w, "ready")
		return
	}
	w.WriteHeader(http.StatusServiceUnavailable)
	for _, reason := range unmet {
		fmt.Fprintln(w, reason)
	}
}

func noStore(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
}
