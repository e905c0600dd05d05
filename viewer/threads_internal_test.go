package viewer

import (
	"testing"
	"time"
)

func TestRelativeTime(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		ago  time.Duration
		want string
	}{
		{-time.Hour, "just now"}, // a clock ahead of ours
		{0, "just now"},
		{59 * time.Second, "just now"},
		{5 * time.Minute, "5 min ago"},
		{59*time.Minute + 59*time.Second, "59 min ago"},
		{time.Hour, "1 hour ago"},
		{23 * time.Hour, "23 hours ago"},
		{24 * time.Hour, "1 day ago"},
		{29 * 24 * time.Hour, "29 days ago"},
		{30 * 24 * time.Hour, "1 month ago"},
		{200 * 24 * time.Hour, "6 months ago"},
		{365 * 24 * time.Hour, "1 year ago"},
		{800 * 24 * time.Hour, "2 years ago"},
	}
	for _, tt := range tests {
		if got := relativeTime(now, now.Add(-tt.ago)); got != tt.want {
			t.Errorf("relativeTime(now, now-%v) = %q, want %q", tt.ago, got, tt.want)
		}
	}
}
