// Command upgrade is the rolling upgrade test (make upgrade-test; the run
// script builds both binaries and calls it): a 3-node cluster started with
// the previous release's binary is upgraded one node at a time to this
// tree's, under an idempotent acks=all producer and a group consumer, and
// every acknowledged record must then be in the log exactly once.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

type options struct {
	oldBin, newBin string
	dir            string
	topic          string
	partitions     int
	every          time.Duration // between two produced records
	reverse        bool          // a rolling downgrade: from -new to -old
}

func main() {
	var o options
	flag.StringVar(&o.oldBin, "old", "", "the previous release's sluice binary")
	flag.StringVar(&o.newBin, "new", "", "this tree's sluice binary")
	flag.StringVar(&o.dir, "dir", "", "work directory (data dirs, configs, logs)")
	flag.StringVar(&o.topic, "topic", "upgrade", "the test topic")
	flag.IntVar(&o.partitions, "partitions", 6, "partitions of the test topic")
	flag.DurationVar(&o.every, "every", 4*time.Millisecond, "time between two produced records")
	flag.BoolVar(&o.reverse, "reverse", false, "roll back instead: start on the new binary and move to the old one")
	flag.Parse()
	if o.oldBin == "" || o.newBin == "" || o.dir == "" {
		fmt.Fprintln(os.Stderr, "usage: upgrade -old BIN -new BIN -dir DIR")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	err := run(ctx, o)
	fmt.Printf("upgrade test took %s\n", time.Since(start).Round(100*time.Millisecond))
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: %v\n(node logs and client error lines under %s)\n", err, o.dir)
		os.Exit(1)
	}
	fmt.Println("PASS: rolling upgrade")
}

func run(ctx context.Context, o options) error {
	var err error
	if o.oldBin, err = filepath.Abs(o.oldBin); err != nil {
		return err
	}
	if o.newBin, err = filepath.Abs(o.newBin); err != nil {
		return err
	}
	if o.reverse {
		o.oldBin, o.newBin = o.newBin, o.oldBin
		fmt.Println("rolling downgrade: the cluster starts on the new binary and moves to the old one")
	}
	vers, err := binaryVersions(o.oldBin, o.newBin)
	if err != nil {
		return err
	}
	c, err := newCluster(o)
	if err != nil {
		return err
	}
	defer c.close()
	if err := c.startOld(ctx); err != nil {
		return err
	}
	s, err := c.runUpgrade(ctx, vers)
	if s == nil {
		return err
	}
	s.print(os.Stdout)
	return errors.Join(err, s.verdict())
}
