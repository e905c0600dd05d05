package page

import (
	"strings"
	"testing"
	"time"
)

// An age is written in units nobody misreads: "m" is refused with the two
// ways to say what was meant, and every other unit adds up.
func TestParseAge(t *testing.T) {
	day := 24 * time.Hour
	for in, want := range map[string]time.Duration{
		"90s": 90 * time.Second, "90min": 90 * time.Minute, "36h": 36 * time.Hour, "180d": 180 * day,
		"2w": 14 * day, "6mo": 180 * day, "1y": 365 * day, "1y2mo": 425 * day, "1h30min": 90 * time.Minute,
	} {
		if got, err := ParseAge(in); err != nil || got != want {
			t.Errorf("ParseAge(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, says := range map[string]string{
		"6m": "6min for minutes or 6mo for months", "1h30m": "ambiguous", "": "empty", "d": "not an age",
		"7": "not an age", "-3d": "not an age", "1.5h": "not an age", "3days": `unit "days"`,
		"99999999999y": "too long", "30000y": "too long",
	} {
		_, err := ParseAge(in)
		if err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("ParseAge(%q): %v, want an error saying %q", in, err, says)
		}
	}
}
