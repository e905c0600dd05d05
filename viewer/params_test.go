package viewer

import (
	"errors"
	"testing"
	"time"

	"github.com/convtrace/convtrace/store/page"
)

func TestTimeRange(t *testing.T) {
	now := time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC)
	ns := func(t time.Time) uint64 { return uint64(t.UnixNano()) }
	tests := []struct {
		from, to         string
		wantFrom, wantTo uint64
		wantErr          string // the parameter named, "" for none
	}{
		{"", "", 0, 0, ""},
		{"2026-05-01T09:00:00Z", "", ns(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)), 0, ""},
		{"2026-05-01T11:00:00+02:00", "", ns(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)), 0, ""},
		{"2026-05-01T09:30", "2026-05-02", ns(time.Date(2026, 5, 1, 9, 30, 0, 0, time.UTC)), ns(time.Date(2026, 5, 2, 0, 0, 0, 0, time.UTC)), ""},
		{"7d", "1h", ns(now.Add(-7 * 24 * time.Hour)), ns(now.Add(-time.Hour)), ""},
		{"yesterday", "", 0, 0, "from"},
		{"", "-5m", 0, 0, "to"},
		{"2026-05-02", "2026-05-01", 0, 0, "to"},
		{"1969-12-31", "", 0, 0, "from"},
	}
	for _, tt := range tests {
		from, to, err := page.TimeRange(tt.from, tt.to, now)
		var pe *page.ParamError
		switch {
		case tt.wantErr != "":
			if !errors.As(err, &pe) || pe.Param != tt.wantErr {
				t.Errorf("timeRange(%q, %q) error %v, want a page.ParamError naming %s", tt.from, tt.to, err, tt.wantErr)
			}
		case err != nil || from != tt.wantFrom || to != tt.wantTo:
			t.Errorf("timeRange(%q, %q) = %d, %d, %v; want %d, %d", tt.from, tt.to, from, to, err, tt.wantFrom, tt.wantTo)
		}
	}
}

func TestParseLimit(t *testing.T) {
	tests := []struct {
		value   string
		want    int
		wantErr bool
	}{{"", 50, false}, {"1", 1, false}, {"500", 500, false}, {"0", 0, true}, {"501", 0, true}, {"ten", 0, true}}
	for _, tt := range tests {
		got, err := parseLimit("limit", tt.value, 50, 500)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("parseLimit(%q) = %d, %v; want %d, error %v", tt.value, got, err, tt.want, tt.wantErr)
		}
	}
}
