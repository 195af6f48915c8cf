module github.com/sluice-io/sluice
