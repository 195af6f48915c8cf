package api

func BrokerHandlers(d BrokerDeps) []Handler {
	var hs []Handler
	if d.Data != nil {
		hs = append(hs,
			newFetchHandler(d.Data),
			newProduceHandler(d.Data),
		)
	}
	if d.Admin != nil {
		hs = append(hs, newDescribeQuorumHandler(d.Admin))
	}
	return hs
}

func ControllerHandlers(d ControllerDeps) []Handler {
	var hs []Handler
	if d.Brokers != nil {
		hs = append(hs, newBrokerRegistrationHandler(d.Brokers))
	}
	if d.Quorum != nil {
		hs = append(hs, newControllerDescribeQuorumHandler(d.Quorum))
	}
	if d.Logs != nil {
		hs = append(hs, newMetadataLogFetchHandler(d.Logs))
	}
	return hs
}
