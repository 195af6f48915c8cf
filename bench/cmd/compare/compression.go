package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// The compression phase: the acks=1, 16-partition produce row with zstd- and lz4-compressed
// batches (compression.type on producer-perf-test), values from a payload file of English-
// like text lines, so the batches compress as real text does, not as all-zero bytes.
var compressionSpecs = []string{"zstd", "lz4"}

const payloadLines = 2000

// compressionWords is the vocabulary of the payload lines, drawn with a skewed choice so
// frequent words repeat as they do in log lines and messages.
var compressionWords = strings.Fields(`the of and to in a is that for it as was with be by on not he this are or his from
at which but have an they you were her she there one all we their been has when who will more no if out so said what
up its about into than them can only other new some could time these two may then do first any my now such like our
over man me even most made after also did many before must through back years where much your way well down should
because each just those people how too little state good very make world still own see men work long get here between
both life being under never day same another know while last might us great old year off come since against go came
right used take three order user request response server client partition offset broker topic record event status
error warning info debug session payment account invoice shipment customer product price quantity total region zone`)

// textPayload is one line of recordSize bytes of space-separated words.
func textPayload(rng *rand.Rand) []byte {
	var b strings.Builder
	for b.Len() < recordSize {
		// The square skews the choice towards the front of the list.
		f := rng.Float64()
		b.WriteString(compressionWords[int(f*f*float64(len(compressionWords)))])
		b.WriteByte(' ')
	}
	return []byte(b.String()[:recordSize])
}

// writePayloadFile writes payloadLines lines of text, each recordSize bytes, for
// producer-perf-test's --payload-file (it picks a line at random for each record).
func writePayloadFile(dir string) (string, error) {
	rng := rand.New(rand.NewPCG(24, 5))
	var b strings.Builder
	for range payloadLines {
		b.Write(textPayload(rng))
		b.WriteByte('\n')
	}
	path := filepath.Join(dir, "payload-1k-text.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return "", fmt.Errorf("payload file: %w", err)
	}
	return path, nil
}

func compressionSpec(codec, payload string) produceSpec {
	return produceSpec{Partitions: catchUpPartitions, Compression: codec, PayloadFile: payload}
}

// compressionPhase alternates Sluice and Kafka sessions, each running the zstd and the lz4
// row as the plain produce rows run (windows, broker CPU over them).
func (s *suite) compressionPhase(ctx context.Context) {
	payload, err := writePayloadFile(s.scratch)
	if err != nil {
		s.res.note("compression phase skipped: %v", err)
		return
	}
	var specs []produceSpec
	for _, c := range compressionSpecs {
		specs = append(specs, compressionSpec(c, payload))
	}
	for r := 1; r <= s.prof.Rounds && ctx.Err() == nil; r++ {
		for _, sys := range []system{sysSluice, sysKafka} {
			s.session(ctx, sys, r, "compression", func(b broker) error {
				s.produceRuns(ctx, b, sys, r, specs)
				return nil
			})
		}
	}
}

// renderCompressionMethod says how the compression rows were measured.
func renderCompressionMethod(b *strings.Builder) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format+"\n", args...) }
	p("- Compression rows: as the acks=1, 16-partition produce row (same windows, broker CPU over")
	p("  them), with `--command-property compression.type=zstd` or `lz4` and `--payload-file` of")
	p("  %d lines of %d bytes of space-separated English words (a vocabulary of %d, skewed),", payloadLines, recordSize, len(compressionWords))
	p("  the tool picking a line at random per record. MB/s and CPU per GB count uncompressed")
	p("  value bytes, not the compressed bytes on the wire.")
}

// workloadPhases runs issue 24's workload phases that were asked for; they are
// single-broker rows.
func (s *suite) workloadPhases(ctx context.Context, want map[string]bool, single bool) {
	if !single {
		s.res.note("The omb, compression and connections rows are single-broker rows; --nodes without 1 ran none.")
		return
	}
	if want["omb"] {
		s.ombPhase(ctx)
	}
	if want["compression"] {
		s.compressionPhase(ctx)
	}
	if want["connections"] {
		s.connectionsPhase(ctx)
	}
}
