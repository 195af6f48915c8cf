package controller

import (
	"slices"

	"github.com/sluice-io/sluice/internal/metadata"
)

// rackAlternated orders brokers so consecutive ones sit on different racks
// (broker.rack) whenever possible: the first broker of each rack in rack
// order, then the second of each, and so on, as Kafka's rack-aware
// assignment does. placeReplicas then takes consecutive brokers, so a
// partition's replicas span as many racks as there are. Brokers without a
// rack form one rack of their own; with no racks at all the order is kept.
func rackAlternated(im *metadata.Image, brokers []int32) []int32 {
	byRack := map[string][]int32{}
	var racks []string
	anyRack := false
	for _, id := range brokers {
		rack := ""
		if b, ok := im.Broker(id); ok && b.Rack != nil {
			rack, anyRack = *b.Rack, true
		}
		if _, seen := byRack[rack]; !seen {
			racks = append(racks, rack)
		}
		byRack[rack] = append(byRack[rack], id)
	}
	if !anyRack {
		return brokers
	}
	slices.Sort(racks)
	out := make([]int32, 0, len(brokers))
	for i := 0; len(out) < len(brokers); i++ {
		for _, r := range racks {
			if i < len(byRack[r]) {
				out = append(out, byRack[r][i])
			}
		}
	}
	return out
}
