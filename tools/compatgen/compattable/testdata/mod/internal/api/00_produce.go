package api

const produceMax = 9

func newProduceHandler(_ *Registry, deps Deps) (Handler, bool) {
	if deps.DataPlane == nil {
		return Handler{}, false
	}
	return Handler{Key: 0, MinVersion: int16(3), MaxVersion: produceMax, Handle: nil}, true
}
