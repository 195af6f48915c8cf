package assignor

import "slices"

type uniform struct{}

func (uniform) Name() string { return UniformName }

// Assign follows Kafka's UniformAssignor: when every member subscribes to the
// same topics, the homogeneous builder gives each member its quota (the
// partition count over the member count, plus one for the first members
// that can take a remainder) keeping what it holds up to that quota; else
// the heterogeneous builder hands unassigned partitions to the least loaded
// subscribers and then moves partitions from the most to the least loaded
// subscribers of each topic until no topic can improve.
func (uniform) Assign(spec Spec) (map[string]Assignment, error) {
	p, err := newPlan(spec, true)
	if err != nil {
		return nil, err
	}
	if p.homogeneous() {
		err = p.uniformHomogeneous()
	} else {
		p.uniformHeterogeneous()
	}
	if err != nil {
		return nil, err
	}
	return p.result(), nil
}

// homogeneous reports whether every member subscribes to the same known
// topics (Kafka's SubscriptionType.HOMOGENEOUS). Kafka decides on the
// subscribed names and regexes, so a group whose members differ only in
// names of topics that do not exist gets the heterogeneous builder there;
// both builders balance such a group to within one partition.
func (p *plan) homogeneous() bool {
	for m := 1; m < len(p.members); m++ {
		if !slices.Equal(p.memberSubs(m), p.memberSubs(0)) {
			return false
		}
	}
	return true
}
