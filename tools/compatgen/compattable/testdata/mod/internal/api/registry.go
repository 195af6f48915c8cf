package api

func NewRegistry(release Release, handlers []Handler) (*Registry, error) {
	r := &Registry{handlers: make(map[int16]Handler)}
	for _, h := range append([]Handler{newApiVersionsHandler(r)}, handlers...) {
		r.add(h)
	}
	return r, nil
}

func newApiVersionsHandler(r *Registry) Handler {
	return Handler{Key: 18, MinVersion: 0, MaxVersion: 5}
}
