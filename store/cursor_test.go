package store

import "testing"

func TestParseCursor(t *testing.T) {
	for _, c := range []Cursor{{LastNS: 0, ID: ""}, {LastNS: 1777626111000000000, ID: "th-long"}, {LastNS: 5, ID: "team/a b?c=d.e"}, {LastNS: 7, ID: "데이터 🚀"}} {
		got, err := ParseCursor("before", c.String())
		if err != nil || got == nil || *got != c {
			t.Errorf("ParseCursor(%q) = %v, %v; want %v", c.String(), got, err, c)
		}
	}
	for _, bad := range []string{"x", "12", "12.!!", "-1.YQ", "1.YQ=", ".YQ"} {
		if got, err := ParseCursor("before", bad); err == nil {
			t.Errorf("ParseCursor(%q) = %v, want an error", bad, got)
		}
	}
	if got, err := ParseCursor("before", ""); got != nil || err != nil {
		t.Errorf(`ParseCursor("") = %v, %v; want no cursor`, got, err)
	}
}
