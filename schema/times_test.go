package schema

import (
	"strings"
	"testing"
)

// One rule for the times convtrace stores: the bounds are in, a
// nanosecond past them out, with the range named.
func TestCheckTime(t *testing.T) {
	tests := []struct {
		ns   uint64
		want string // in the error; "" when valid
	}{
		{MinTimeNS, ""},
		{MaxTimeNS, ""},
		{1_777_000_000_000_000_000, ""},
		{0, "start 0 (1970-01-01T00:00:00Z) is outside the times convtrace stores, 2000-01-01T00:00:00Z to 2106-02-07T06:28:15Z"},
		{MinTimeNS - 1, "1999-12-31T23:59:59.999999999Z"},
		{1_700_000_000_000, "1970-01-01T00:28:20Z"}, // milliseconds sent as nanoseconds
		{MaxTimeNS + 1, "2106-02-07T06:28:15.000000001Z"},
		{7_258_118_400_000_000_000, "2200-01-01T00:00:00Z"},
	}
	for _, tt := range tests {
		err := CheckTime("start", tt.ns)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("CheckTime(%d) = %q, want %q", tt.ns, got, tt.want)
		}
	}
}
