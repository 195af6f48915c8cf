package config

import (
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary properties text to Parse: it must return a config or an error,
// never panic, and an accepted config must answer its derived queries and describe itself.
func FuzzParse(f *testing.F) {
	f.Add("")
	f.Add("num.partitions=3\nlog.retention.hours=1\n")
	f.Add("listeners=PLAINTEXT://[::1]:9092,CONTROLLER://:9093\n")
	f.Add("controller.quorum.voters=1@h:1,2@h:2\nprocess.roles=broker\n")
	f.Add("a\\\n=b\\u00e9\n!x\n#y\nlog.cleanup.policy=compact , delete\n")
	f.Add("log.cleaner.min.cleanable.ratio=1e-3\nlisteners=PLAINTEXT://:0\n")
	f.Fuzz(func(t *testing.T, text string) {
		c, err := Parse(text, nil)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		_ = c.Listeners()
		_ = c.LogDirs()
		_ = c.Long(LogRetentionMs)
		_ = c.Long(LogRollMs)
		_ = c.List(LogCleanupPolicy)
		_ = c.Double(LogCleanerMinCleanableRatio)
		for _, e := range c.DescribeBroker(nil) {
			if e.Sensitive && e.Value != nil {
				t.Fatalf("sensitive %s reported", e.Name)
			}
		}
		topic, err := c.ResolveTopic(nil)
		if err != nil {
			if !strings.Contains(err.Error(), "compaction") {
				t.Fatalf("broker defaults make an invalid topic: %v", err)
			}
			return
		}
		_ = topic.Long(TopicRetentionMs)
		_ = c.DescribeTopic(nil, nil)
	})
}
