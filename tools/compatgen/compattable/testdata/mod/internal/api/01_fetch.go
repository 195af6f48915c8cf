package api

import w "sluice/internal/wire"

func newFetchHandler(_ *Registry, deps Deps) (Handler, bool) {
	return Handler{
		Key:        1,
		MinVersion: w.FloorVersion,
		MaxVersion: w.TopVersion,
	}, true
}

// newUnlistedHandler is not in handlerConstructors, so it is not read.
func newUnlistedHandler(_ *Registry, _ Deps) (Handler, bool) {
	return Handler{Key: 2, MinVersion: 0, MaxVersion: 1}, true
}
