package query

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// chunkIDs keeps every id once, sorted (so that a chunk is a range of the
// sort key), and each chunk within both limits, however the ids' lengths
// fall.
func TestChunkIDs(t *testing.T) {
	ids := func(n, size int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%0*d", size, i)
		}
		return out
	}
	big := strings.Repeat("x", summaryChunkBytes+1) // over the byte limit alone
	tests := []struct {
		name string
		ids  []string
		want []int // chunk lengths
	}{
		{"none", nil, nil},
		{"one", ids(1, 5), []int{1}},
		{"count limit", ids(2*summaryChunk+1, 5), []int{summaryChunk, summaryChunk, 1}},
		{"byte limit", ids(300, 200), []int{204, 96}}, // 204·200 ≤ 40 KiB < 205·200
		{"an id over the byte limit stands alone", append(ids(2, 5), big, "a"), []int{3, 1}},
		{"sorted", []string{"b", "c", "a"}, []int{3}},
	}
	for _, tt := range tests {
		want := slices.Sorted(slices.Values(tt.ids))
		chunks := chunkIDs(tt.ids)
		var got []int
		var joined []string
		for _, c := range chunks {
			got = append(got, len(c))
			joined = append(joined, c...)
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) || !slices.Equal(joined, want) {
			t.Errorf("%s: chunk lengths %v, want %v (ids kept once, sorted: %v)", tt.name, got, tt.want,
				slices.Equal(joined, want))
		}
	}
}
