package controller

// Address checks for ACL hosts and IP quota entities. The controller is
// pure (internal/archtest forbids net/... here), so the text forms are
// checked by hand: IPv4 dotted quads, IPv6 (RFC 4291 text, an IPv4 tail
// allowed) and Kafka's CIDR host patterns (KIP-1276).

import (
	"fmt"
	"strconv"
	"strings"
)

// isIPv4 reports whether s is a dotted quad of decimal octets.
func isIPv4(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		if len(p) == 0 || len(p) > 3 || !isDigits(p) {
			return false
		}
		if n, _ := strconv.Atoi(p); n > 255 {
			return false
		}
	}
	return true
}

// isIPv6 reports whether s is an IPv6 address in text form: eight groups
// of 1-4 hex digits, "::" once for a run of zero groups, the last two
// groups possibly written as an IPv4 address.
func isIPv6(s string) bool {
	if strings.Count(s, "::") > 1 {
		return false
	}
	head, tail, compressed := strings.Cut(s, "::")
	if !compressed {
		n, ok := ipv6Groups(s, true)
		return ok && n == 8
	}
	h, okH := ipv6Groups(head, false)
	t, okT := ipv6Groups(tail, true)
	return okH && okT && h+t <= 7
}

// ipv6Groups counts the groups of part ("" has none); an IPv4 tail counts
// two and is allowed last when v4Tail is set.
func ipv6Groups(part string, v4Tail bool) (int, bool) {
	if part == "" {
		return 0, true
	}
	fields := strings.Split(part, ":")
	n := 0
	for i, f := range fields {
		if v4Tail && i == len(fields)-1 && strings.Contains(f, ".") {
			if !isIPv4(f) {
				return 0, false
			}
			n += 2
			continue
		}
		if len(f) == 0 || len(f) > 4 || !isHex(f) {
			return 0, false
		}
		n++
	}
	return n, true
}

func isDigits(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }) < 0
}

func isHex(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool {
		return (r < '0' || r > '9') && (r < 'a' || r > 'f') && (r < 'A' || r > 'F')
	}) < 0
}

// validateCIDR checks a CIDR host pattern as Kafka's CidrUtils.validate
// (commons-net SubnetUtils for IPv4, SubnetUtils6 when it holds a ':'),
// with their messages.
func validateCIDR(s string) error {
	parseFail := fmt.Errorf("Could not parse [%s]", s)
	addr, bits, ok := strings.Cut(s, "/")
	if !ok || strings.Contains(bits, "/") {
		return parseFail
	}
	if strings.Contains(s, ":") {
		n, err := strconv.Atoi(bits)
		if err != nil || n < 0 || n > 128 || !isIPv6(addr) {
			return parseFail
		}
		return nil
	}
	octets := strings.Split(addr, ".")
	if len(octets) != 4 || len(bits) == 0 || len(bits) > 2 || !isDigits(bits) {
		return parseFail
	}
	for _, o := range octets {
		if len(o) == 0 || len(o) > 3 || !isDigits(o) {
			return parseFail
		}
	}
	for _, o := range octets {
		if n, _ := strconv.Atoi(o); n > 255 {
			return fmt.Errorf("Value [%d] not in range [0,255]", n)
		}
	}
	if n, _ := strconv.Atoi(bits); n > 32 {
		return fmt.Errorf("Value [%d] not in range [0,32]", n)
	}
	return nil
}
