package console

import (
	"fmt"
	"html"
	"net/http"
	"net/http/pprof"
	runtimepprof "runtime/pprof"
	"slices"
)

// mountPprof registers pprof's handlers on mux only; nothing serves
// http.DefaultServeMux, where importing net/http/pprof put them all.
// pprof.Cmdline is left out: the command line holds what --override set,
// passwords included. The index is ours so it does not link it.
func mountPprof(mux *http.ServeMux, users BasicAuthUsers) {
	handle := func(pattern string, h http.HandlerFunc) { mux.Handle(pattern, guard(users, h)) }
	handle("/debug/pprof/{$}", pprofIndex)
	handle("/debug/pprof/", pprof.Index)
	handle("/debug/pprof/cmdline", http.NotFound)
	handle("/debug/pprof/profile", pprof.Profile)
	handle("/debug/pprof/symbol", pprof.Symbol)
	handle("/debug/pprof/trace", pprof.Trace)
}

// pprofIndex lists the runtime's profiles and the CPU profile, symbol and
// trace endpoints, as pprof.Index does, without the command line.
func pprofIndex(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	var names []string
	for _, p := range runtimepprof.Profiles() {
		names = append(names, p.Name())
	}
	names = append(names, "profile", "symbol", "trace")
	slices.Sort(names)
	fmt.Fprint(w, "<html><head><title>/debug/pprof/</title></head><body>\n<p>Profiles (add ?debug=1 for text):</p>\n<ul>\n")
	for _, n := range names {
		n = html.EscapeString(n)
		fmt.Fprintf(w, "<li><a href=\"%s?debug=1\">%s</a></li>\n", n, n)
	}
	fmt.Fprint(w, "</ul>\n</body></html>\n")
}
