// Package embed shows github.com/sluice-io/sluice/sluicetest used as a Go
// project outside Sluice would use it: a module of its own that requires
// Sluice (here replaced by the local tree) and starts real clusters in its
// tests. See example_test.go.
package embed
