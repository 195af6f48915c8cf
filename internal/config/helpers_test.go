package config

import "github.com/twmb/franz-go/pkg/kerr"

func errInvalidConfigForTest() error { return kerr.InvalidConfig }

// integerByName reads an int, short or long key by name, for tables of defaults that mix
// them; code outside the tests reads keys through their typed values.
func integerByName(src valueSource, key string) int64 {
	return getInteger(src, key, 64, TypeLong, TypeInt, TypeShort)
}
