package api

func handlerConstructors() []func(*Registry, Deps) (Handler, bool) {
	return []func(*Registry, Deps) (Handler, bool){newFetchHandler, newProduceHandler}
}
