package viewer

import (
	"testing"
	"time"

	"github.com/convtrace/convtrace/store"
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

// A thread's duration in the list: finer for short runs, coarser for long.
func TestListDuration(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{0, ""},
		{1500 * time.Millisecond, "1.5s"},
		{121*time.Second + 400*time.Millisecond, "2m1s"},
		{3*time.Hour + 4*time.Minute + 40*time.Second, "3h5m"},
		{5022*time.Hour + 53*time.Minute, "209d7h"},
	} {
		if got := listDuration(uint64(tt.d)); got != tt.want {
			t.Errorf("listDuration(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

// The thread attributes partial, which the list's rows and the thread
// page's header include: names sorted, each linking to the list of its
// value with both escaped in the URL, and the text escaped in the page.
func TestThreadAttrsPartial(t *testing.T) {
	th := store.Thread{Attributes: map[string]string{"task": "T-42 & <b>", "board": "ops/a?b"}}
	out, err := parsePages(false).render("threadAttrs", th)
	if err != nil {
		t.Fatal(err)
	}
	want := `<span class="thread-attrs">` +
		` <a class="thread-attr" href="/?attr.board=ops%2fa%3fb" title="threads whose board is ops/a?b"><span class="attr-name">board</span> ops/a?b</a>` +
		` <a class="thread-attr" href="/?attr.task=T-42%20%26%20%3cb%3e" title="threads whose task is T-42 &amp; &lt;b&gt;"><span class="attr-name">task</span> T-42 &amp; &lt;b&gt;</a>` +
		`</span>`
	if string(out) != want {
		t.Errorf("threadAttrs:\n%s\nwant\n%s", out, want)
	}
	if none, err := parsePages(false).render("threadAttrs", store.Thread{Attributes: map[string]string{}}); err != nil || len(none) != 0 {
		t.Errorf("threadAttrs of none: %q, %v; want nothing", none, err)
	}
}
