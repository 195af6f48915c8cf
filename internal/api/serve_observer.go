package api

import "context"

// ServeObserver learns of each request the moment its handler starts, with
// its decoded body: the server's request metrics time the request's queue
// and local time from there, and name a Fetch by its replica id as Kafka
// does (FetchConsumer, FetchFollower).
type ServeObserver interface {
	HandlerStarting(req *Request)
}

func handle(ctx context.Context, h Handler, req *Request, obs ServeObserver) Response {
	if obs != nil {
		obs.HandlerStarting(req)
	}
	return h.Handle(ctx, req)
}
