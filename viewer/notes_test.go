package viewer_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// put sends a JSON note change to path, as the thread page's star and
// memo do, and returns the answer.
func put(t *testing.T, h http.Handler, path, body string) response {
	t.Helper()
	return send(t, h, http.MethodPut, path, "application/json", body)
}

type noteBody struct {
	ThreadID  string `json:"thread_id"`
	TurnID    string `json:"turn_id"`
	Starred   bool   `json:"starred"`
	Memo      string `json:"memo"`
	UpdatedNS uint64 `json:"updated_ns"`
}

// A note change keeps the field it does not hold; each change is newer
// than the last, so the newest wins before any merge.
func TestPutNote(t *testing.T) {
	h, all := filterFixture(t)
	path := "/api/threads/th-f/turns/" + all[1] + "/note"
	steps := []struct {
		body string
		want noteBody
	}{
		{`{"starred": true}`, noteBody{Starred: true}},
		{`{"memo": "메모 ✍️ <script>alert(1)</script>"}`, noteBody{Starred: true, Memo: "메모 ✍️ <script>alert(1)</script>"}},
		{`{"starred": false}`, noteBody{Memo: "메모 ✍️ <script>alert(1)</script>"}},
		{`{"starred": true, "memo": "second"}`, noteBody{Starred: true, Memo: "second"}},
		{`{}`, noteBody{Starred: true, Memo: "second"}},
		{`{"memo": "` + strings.Repeat("한", 8000) + `"}`, noteBody{Starred: true, Memo: strings.Repeat("한", 8000)}},
		{`{"memo": "final"}`, noteBody{Starred: true, Memo: "final"}},
	}
	var last uint64
	for _, st := range steps {
		res := put(t, h, path, st.body)
		if res.status != http.StatusOK {
			t.Fatalf("PUT %s %.40s: status %d: %s", path, st.body, res.status, res.body)
		}
		var got noteBody
		if err := json.Unmarshal([]byte(res.body), &got); err != nil {
			t.Fatal(err)
		}
		if got.Starred != st.want.Starred || got.Memo != st.want.Memo || got.TurnID != all[1] || got.ThreadID != "th-f" {
			t.Errorf("PUT %.40s: got %+.80v, want starred %v memo %.40q", st.body, got, st.want.Starred, st.want.Memo)
		}
		if got.UpdatedNS <= last {
			t.Errorf("PUT %.40s: updated_ns %d, not after %d", st.body, got.UpdatedNS, last)
		}
		last = got.UpdatedNS
	}

	// The turns API and the starred filter read the newest note.
	var body struct {
		Turns []struct {
			TurnID  string `json:"turn_id"`
			Starred bool   `json:"starred"`
			Memo    string `json:"memo"`
		} `json:"turns"`
	}
	getJSON(t, h, "/api/threads/th-f/turns?starred=1", http.StatusOK, &body)
	if len(body.Turns) != 1 || body.Turns[0].TurnID != all[1] || !body.Turns[0].Starred || body.Turns[0].Memo != "final" {
		t.Errorf("starred turns = %+v, want %s starred with memo final", body.Turns, all[1])
	}
	put(t, h, "/api/threads/th-f/turns/"+all[3]+"/note", `{"starred": true}`)
	put(t, h, "/api/threads/th-f/turns/"+all[3]+"/note", `{"starred": false}`)
	if got := turnIDs(t, h, "/api/threads/th-f/turns?starred=1"); strings.Join(got, ",") != all[1] {
		t.Errorf("starred turns after a star and unstar of %s: %q, want only %s", all[3], got, all[1])
	}

	// The page shows the star and the memo.
	card := article(t, get(t, h, "/threads/th-f").body, all[1])
	for _, want := range []string{`turn-starred`, `<button type="button" class="star" aria-pressed="true"`, `<p class="memo">final</p>`, `<button type="button" class="memo-open">Edit memo</button>`} {
		if !strings.Contains(card, want) {
			t.Errorf("card %s lacks %q:\n%s", all[1], want, card)
		}
	}
}

func TestPutNoteRefused(t *testing.T) {
	h, all := filterFixture(t)
	path := "/api/threads/th-f/turns/" + all[1] + "/note"
	ct := "application/json"
	tests := []struct {
		name, path, contentType, body string
		header                        []string
		status                        int
		want                          string
	}{
		{"memo too long", path, ct, `{"memo": "` + strings.Repeat("한", 8001) + `"}`, nil, 400, "memo: 8001 characters, at most 8000"},
		{"not JSON", path, ct, `starred=1`, nil, 400, "body:"},
		{"wrong type", path, ct, `{"starred": "yes"}`, nil, 400, "body:"},
		{"unknown turn", "/api/threads/th-f/turns/nope/note", ct, `{"starred": true}`, nil, 404, "turn not found"},
		{"unknown thread", "/api/threads/nope/turns/" + all[1] + "/note", ct, `{"starred": true}`, nil, 404, "turn not found"},
		{"cross-origin", path, ct, `{"starred": true}`, []string{"Sec-Fetch-Site", "cross-site"}, 403, "cross-origin"},
		{"other origin", path, ct, `{"starred": true}`, []string{"Origin", "https://evil.example"}, 403, "cross-origin"},
		{"form post", path, "application/x-www-form-urlencoded", `starred=1`, nil, 415, "application/json"},
		{"text", path, "text/plain", `{"starred": true}`, nil, 415, "application/json"},
	}
	for _, tt := range tests {
		res := send(t, h, http.MethodPut, tt.path, tt.contentType, tt.body, tt.header...)
		if res.status != tt.status || !strings.Contains(res.body, tt.want) {
			t.Errorf("%s: PUT %s: status %d, body %.200q; want %d containing %q", tt.name, tt.path, res.status, res.body, tt.status, tt.want)
		}
	}
	// Nothing refused was stored.
	if got := turnIDs(t, h, "/api/threads/th-f/turns?starred=1"); len(got) != 0 {
		t.Errorf("starred turns after refused changes: %q, want none", got)
	}
}
