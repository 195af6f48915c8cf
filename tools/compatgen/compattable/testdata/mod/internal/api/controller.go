package api

func newBrokerRegistrationHandler(b BrokerControl) Handler {
	return Handler{Key: 62, MinVersion: 0, MaxVersion: 4, Handle: nil}
}

func newDescribeQuorumHandler(a AdminController) Handler {
	return Handler{Key: 55, MinVersion: 0, MaxVersion: 2}
}

func newControllerDescribeQuorumHandler(q QuorumControl) Handler {
	return Handler{Key: 55, MinVersion: 0, MaxVersion: 2}
}
