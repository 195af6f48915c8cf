package main

import (
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// keyVerdict is the comparison of one API key between the broker and kmsg.
type keyVerdict struct {
	Key          int16
	Name         string
	BrokerMin    int16
	BrokerMax    int16
	KmsgMax      int16 // -1 when kmsg does not know the key at all
	BrokerAhead  bool  // the broker can speak a version kmsg cannot encode/decode
	KmsgKnowsKey bool
}

// compareWithKmsg judges every key the broker advertises against kmsg's highest version.
func compareWithKmsg(keys []kmsg.ApiVersionsResponseApiKey) []keyVerdict {
	verdicts := make([]keyVerdict, 0, len(keys))
	for _, k := range keys {
		v := keyVerdict{Key: k.ApiKey, Name: kmsg.NameForKey(k.ApiKey), BrokerMin: k.MinVersion, BrokerMax: k.MaxVersion, KmsgMax: -1}
		if req := kmsg.RequestForKey(k.ApiKey); req != nil {
			v.KmsgKnowsKey = true
			v.KmsgMax = req.MaxVersion()
		}
		v.BrokerAhead = !v.KmsgKnowsKey || v.BrokerMax > v.KmsgMax
		verdicts = append(verdicts, v)
	}
	sort.Slice(verdicts, func(i, j int) bool { return verdicts[i].Key < verdicts[j].Key })
	return verdicts
}

// writeTable prints one row per key and returns how many keys the broker is ahead on.
func writeTable(w io.Writer, verdicts []keyVerdict) (int, error) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tNAME\tBROKER\tKMSG MAX\tVERDICT")
	ahead := 0
	for _, v := range verdicts {
		kmsgMax := fmt.Sprint(v.KmsgMax)
		if !v.KmsgKnowsKey {
			kmsgMax = "unknown"
		}
		verdict := "ok"
		if v.BrokerAhead {
			verdict = "BROKER AHEAD"
			ahead++
		}
		fmt.Fprintf(tw, "%d\t%s\t%d-%d\t%s\t%s\n", v.Key, v.Name, v.BrokerMin, v.BrokerMax, kmsgMax, verdict)
	}
	if err := tw.Flush(); err != nil {
		return ahead, fmt.Errorf("write table: %w", err)
	}
	return ahead, nil
}
