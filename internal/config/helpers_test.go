package config

import "github.com/twmb/franz-go/pkg/kerr"

func errInvalidConfigForTest() error { return kerr.InvalidConfig }
