//go:build !race

package records_test

// allocSlack scales the allocation bounds of the tests (see race_on_test.go).
const allocSlack = 1
