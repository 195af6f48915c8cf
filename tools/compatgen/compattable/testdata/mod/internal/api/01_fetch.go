package api

import w "github.com/sluice-io/sluice/internal/wire"

func newFetchHandler(d *DataPlaneDeps) Handler {
	return Handler{
		Key:        1,
		MinVersion: w.FloorVersion,
		MaxVersion: w.TopVersion,
	}
}

func newMetadataLogFetchHandler(logs MetadataLogServer) Handler {
	return Handler{Key: 1, MinVersion: 4, MaxVersion: 16}
}

// newUnlistedHandler is in no handler set, so it is not read.
func newUnlistedHandler() Handler {
	return Handler{Key: 2, MinVersion: 0, MaxVersion: 1}
}
