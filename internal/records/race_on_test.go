//go:build race

package records_test

// allocSlack scales the allocation bounds of the tests: under the race
// detector sync.Pool drops what it is given at random, so pooled codec
// state is allocated again.
const allocSlack = 2
