package api

func ControllerHandlers(cp ControllerPlane) []Handler {
	return []Handler{newBrokerRegistrationHandler(cp)}
}

func newBrokerRegistrationHandler(cp ControllerPlane) Handler {
	return Handler{Key: 62, MinVersion: 0, MaxVersion: 4, Handle: nil}
}
