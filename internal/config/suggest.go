package config

import "strings"

// nearest is the known key closest to key by optimal string alignment distance
// (Damerau-Levenshtein with each substring edited once), compared in lower case, if it is a
// near miss: at most one edit per 8 characters of key, at least 1 and at most 3, so
// log.retention.hourz finds log.retention.hours but a different word finds nothing. Ties go
// to the alphabetically first key.
func nearest(key string, known []string) string {
	key = strings.ToLower(key)
	limit := min(max(len(key)/8, 1), 3)
	best, bestDist := "", limit+1
	for _, k := range known {
		if abs(len(k)-len(key)) > limit {
			continue // the distance is at least the difference in length
		}
		d := osaDistance(key, strings.ToLower(k))
		if d < bestDist || d == bestDist && k < best {
			best, bestDist = k, d
		}
	}
	return best
}

// osaDistance counts the insertions, deletions, substitutions and transpositions of
// adjacent bytes that turn a into b, no substring edited twice. Keys are ASCII.
func osaDistance(a, b string) int {
	// Three rows of the dynamic programme: two back (for transpositions), one back, current.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
