package tlsconf

import (
	"crypto/tls"
	"fmt"
	"slices"
	"strings"
)

// protocolVersions are the names ssl.enabled.protocols takes, as JSSE
// names them.
var protocolVersions = []struct {
	name    string
	version uint16
}{
	{"TLSv1", tls.VersionTLS10},
	{"TLSv1.1", tls.VersionTLS11},
	{"TLSv1.2", tls.VersionTLS12},
	{"TLSv1.3", tls.VersionTLS13},
}

// versionRange turns ssl.enabled.protocols into Go's minimum and maximum.
// Go enables a contiguous range, so a list with a gap (TLSv1.1 and
// TLSv1.3 without TLSv1.2) is refused rather than widened.
func versionRange(names []string) (lo, hi uint16, err error) {
	var enabled []int
	for _, n := range names {
		i := slices.IndexFunc(protocolVersions, func(p struct {
			name    string
			version uint16
		}) bool {
			return p.name == n
		})
		if i < 0 {
			return 0, 0, fmt.Errorf("unknown or unsupported protocol %q (supported: TLSv1.2, TLSv1.3, TLSv1.1, TLSv1)", n)
		}
		enabled = append(enabled, i)
	}
	if len(enabled) == 0 {
		return 0, 0, fmt.Errorf("no protocol enabled")
	}
	slices.Sort(enabled)
	enabled = slices.Compact(enabled)
	for k := 1; k < len(enabled); k++ {
		if enabled[k] != enabled[k-1]+1 {
			return 0, 0, fmt.Errorf("protocols %s leave a gap, which Go cannot serve", strings.Join(names, ","))
		}
	}
	return protocolVersions[enabled[0]].version, protocolVersions[enabled[len(enabled)-1]].version, nil
}

// cipherSuites maps ssl.cipher.suites (IANA names, as JSSE uses them, or
// JSSE's older SSL_ aliases) to Go's suite ids. TLS 1.3 suites are
// accepted but not selectable in Go, which enables all of them; tls13only
// reports a list that names nothing else (the TLS 1.2 suites then stay
// Go's defaults). Empty means Go's defaults, as an empty list means the
// JVM's in Kafka.
func cipherSuites(names []string) (ids []uint16, tls13only bool, err error) {
	byName := map[string]uint16{}
	for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		byName[s.Name] = s.ID
	}
	tls13 := map[string]bool{"TLS_AES_128_GCM_SHA256": true, "TLS_AES_256_GCM_SHA384": true, "TLS_CHACHA20_POLY1305_SHA256": true}
	for _, n := range names {
		if n == "" {
			continue
		}
		name := n
		if strings.HasPrefix(name, "SSL_") {
			name = "TLS_" + strings.TrimPrefix(name, "SSL_")
		}
		if tls13[name] {
			continue
		}
		id, ok := byName[name]
		if !ok {
			return nil, false, fmt.Errorf("unknown or unsupported cipher suite %q", n)
		}
		ids = append(ids, id)
	}
	return ids, len(ids) == 0 && len(names) > 0 && slices.ContainsFunc(names, func(n string) bool { return tls13[n] }), nil
}
