package api

func ControllerHandlers(cp ControllerPlane) []Handler {
	return []Handler{newBrokerRegistrationHandler(cp)}
}

func newBrokerRegistrationHandler(cp ControllerPlane) Handler {
	return Handler{Key: 62, MinVersion: 0, MaxVersion: 4, Handle: nil}
}

func QuorumHandler(q Describer) Handler {
	return Handler{Key: 55, MinVersion: 0, MaxVersion: 2}
}
