package collector

import (
	"regexp"
	"strings"
	"testing"

	"github.com/convtrace/convtrace/schema"
)

// Fake secrets of the real shapes (none is a live credential).
const (
	fakeOpenAI     = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh3iJk6lMn9oPq2rSt5uVw8xYz"
	fakeOpenAIOld  = "sk-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa9Zy8Xw7Vu6T"
	fakeAnthropic  = "sk-ant-api03-Qw3rTy6uIo9pAs2dFg5hJk8lZx1cVb4nMq7wEr0tYu3iOp6aSd9fGh2jKl5zXc8vBn1mQw4eRt7yUi0oPa3sDf6gHj9kLz2xCv5bNm8QwAA"
	fakeGoogle     = "AIzaSyD3fGh6jKl9zXc2vBn5mQw8eRt1yUi4oPa"
	fakeAWSID      = "AKIAIOSFODNN7EXAMPLE"
	fakeAWSSecret  = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	fakeGitHub     = "ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
	fakeGitHubPAT  = "github_pat_11ABCDEFG0abcdefghijkl_mnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ01"
	fakeJWT        = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	fakePrivateKey = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi\nZ1BjP5CE8Wm3xk2Lq9Q==\n-----END RSA PRIVATE KEY-----"
)

func TestRedactText(t *testing.T) {
	r := newRedactor(true, nil)
	cases := []struct{ in, want string }{
		// Secrets.
		{"key " + fakeOpenAI + " here", "key [REDACTED:openai_key] here"},
		{"OPENAI_API_KEY=" + fakeOpenAIOld, "OPENAI_API_KEY=[REDACTED:openai_key]"},
		{"use sk-proj-abc123def456ghi789jkl0", "use [REDACTED:openai_key]"},
		{`{"key":"` + fakeAnthropic + `"}`, `{"key":"[REDACTED:anthropic_key]"}`},
		{"maps " + fakeGoogle + ".", "maps [REDACTED:google_api_key]."},
		{"id=" + fakeAWSID + " ok", "id=[REDACTED:aws_access_key_id] ok"},
		{"ASIAY34FZKBOKMUTVV7A", "[REDACTED:aws_access_key_id]"},
		{"aws_secret_access_key = " + fakeAWSSecret, "aws_secret_access_key = [REDACTED:aws_secret_access_key]"},
		{`"AWS_SECRET_ACCESS_KEY": "` + fakeAWSSecret + `"`, `"AWS_SECRET_ACCESS_KEY": "[REDACTED:aws_secret_access_key]"`},
		{"token " + fakeGitHub, "token [REDACTED:github_token]"},
		{fakeGitHubPAT, "[REDACTED:github_token]"},
		{"Authorization: Bearer abc.def-123", "Authorization: Bearer [REDACTED:bearer_token]"},
		{`"authorization": "Bearer ` + fakeJWT + `"`, `"authorization": "Bearer [REDACTED:bearer_token]"`},
		{"curl -H 'Authorization: Bearer " + fakeOpenAI + "'", "curl -H 'Authorization: Bearer [REDACTED:openai_key]'"},
		{"send it as bearer " + fakeJWT, "send it as bearer [REDACTED:bearer_token]"},
		{"key:\n" + fakePrivateKey + "\nend", "key:\n[REDACTED:private_key]\nend"},
		{`"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"`, `"[REDACTED:private_key]\n"`},
		{"cut: -----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "cut: [REDACTED:private_key]"},
		{fakeAWSID + " and " + fakeGitHub, "[REDACTED:aws_access_key_id] and [REDACTED:github_token]"},

		// Near misses: ordinary text, hashes, ids.
		{"the task-abcdefghijklmnopqrstuvwxyz0123 is done", ""},
		{"pip install sk-learn-is-not-a-real-package-name", ""},
		{"see sk-2024-roadmap-planning-document-final", ""},
		{"sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", ""},
		{"commit 3f2a1c9e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39", ""},
		{"request 123e4567-e89b-12d3-a456-426614174000", ""},
		{"AKIA is a prefix; AKIAshort is not a key", ""},
		{"the bearer of bad news; Bearer authentication; a bearer token", ""},
		{"-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A\n-----END PUBLIC KEY-----", ""},
		{"-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkq\n-----END CERTIFICATE-----", ""},
		{"aws_secret_access_key = <your secret here>", ""},
		{"Pneumonoultramicroscopicsilicovolcanoconiosis AIzaShort", ""},
		{"한국어 텍스트 sk- 와 AKIA 🙂", ""},
	}
	for _, c := range cases {
		want := c.want
		if want == "" {
			want = c.in
		}
		got, changed := r.text(c.in)
		if got != want || changed != (want != c.in) {
			t.Errorf("redact %q\n got  %q (changed %v)\n want %q", c.in, got, changed, want)
		}
	}
	stats := r.stats()
	for _, kind := range []string{"openai_key", "anthropic_key", "google_api_key", "aws_access_key_id", "aws_secret_access_key", "github_token", "bearer_token", "private_key"} {
		if stats[kind] == 0 {
			t.Errorf("stats[%s] = 0, want the redactions counted: %v", kind, stats)
		}
	}
	if stats["openai_key"] != 4 {
		t.Errorf("openai_key redactions = %d, want 4", stats["openai_key"])
	}
}

func TestRedactOffKeepsContent(t *testing.T) {
	var r *redactor = newRedactor(false, nil)
	turns := []schema.Turn{{Content: fakeOpenAI}}
	r.rows(turns, nil)
	if turns[0].Content != fakeOpenAI || r.stats() != nil {
		t.Errorf("redaction off changed %q to %q, stats %v", fakeOpenAI, turns[0].Content, r.stats())
	}
}

func TestRedactRowsCopiesSharedAttributes(t *testing.T) {
	r := newRedactor(true, nil)
	shared := []schema.Attr{{Key: "a", Value: "plain"}, {Key: "b", Value: "key " + fakeGitHub}}
	turns := []schema.Turn{{Content: "x", Error: "failed with " + fakeAWSID, Attributes: shared}}
	spans := []schema.Span{{StatusMsg: fakeGoogle, Attributes: shared}}
	r.rows(turns, spans)
	if shared[1].Value != "key "+fakeGitHub {
		t.Errorf("the shared attributes were changed in place: %v", shared)
	}
	for _, got := range []string{turns[0].Error, turns[0].Attributes[1].Value, spans[0].StatusMsg, spans[0].Attributes[1].Value} {
		if !strings.Contains(got, "[REDACTED:") {
			t.Errorf("got %q, want a marker", got)
		}
	}
}

func TestParseRedactPatterns(t *testing.T) {
	file := "# internal hosts\n\ninternal_host  \\b[a-z0-9-]+\\.corp\\.example\\.com\\b\npassword\t(?i)password\\s*[:=]\\s*(\\S+)\n"
	ps, err := ParseRedactPatterns(strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].Kind != "internal_host" || ps[1].Kind != "password" {
		t.Fatalf("parsed %+v", ps)
	}
	r := newRedactor(true, ps)
	got, _ := r.text("ssh build-7.corp.example.com with password: hunter2!")
	if want := "ssh [REDACTED:internal_host] with password: [REDACTED:password]"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, bad := range []struct{ file, want string }{
		{"just_a_kind\n", "line 1"},
		{"ok x\nbad!kind x\n", "line 2"},
		{"kind (unclosed\n", "missing closing )"},
		{"empty a*\n", "matches empty text"},
	} {
		if _, err := ParseRedactPatterns(strings.NewReader(bad.file)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("parse %q: err %v, want one containing %q", bad.file, err, bad.want)
		}
	}
	if _, err := configure([]RedactOption{WithRedactPatterns(RedactPattern{Kind: "no regexp"})}, RedactOption.applySpool); err == nil {
		t.Error("a pattern without a regexp was accepted")
	}
	if _, err := configure([]RedactOption{WithRedactPatterns(RedactPattern{Kind: "x", Regexp: regexp.MustCompile("x")})}, RedactOption.applySpool); err != nil {
		t.Error(err)
	}
}

// bigTurn is about 5 MB of text with secrets and near misses all through
// it, the worst a turn at the content cap can be.
func bigTurn() (string, int) {
	chunk := "plain words, a hash 9f86d081884c7d659a2feaa0c55ad015 and a uuid 123e4567-e89b-12d3-a456-426614174000, " +
		"sk- bearer AKIA -----BEGIN " + fakeOpenAI + " then " + fakeAWSID + "\n"
	n := (5 << 20) / len(chunk)
	return strings.Repeat(chunk, n), n
}

// TestRedactBigTurn redacts a 5 MB turn: RE2 keeps this linear in its
// size (BenchmarkRedactBigTurn measures it), and every secret is found.
func TestRedactBigTurn(t *testing.T) {
	r := newRedactor(true, nil)
	in, n := bigTurn()
	got, _ := r.text(in)
	if c := strings.Count(got, "[REDACTED:openai_key]"); c != n {
		t.Errorf("%d openai markers, want %d", c, n)
	}
	if c := strings.Count(got, "[REDACTED:aws_access_key_id]"); c != n {
		t.Errorf("%d aws markers, want %d", c, n)
	}
	if strings.Contains(got, fakeAWSID) || strings.Contains(got, "sk-proj-") {
		t.Error("a secret was left in the big turn")
	}
}

func BenchmarkRedactBigTurn(b *testing.B) {
	r := newRedactor(true, nil)
	in, _ := bigTurn()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		r.text(in)
	}
}

func BenchmarkRedactPlainTurn(b *testing.B) {
	r := newRedactor(true, nil)
	in := strings.Repeat("An ordinary answer about plans, reviews and tests, with numbers 12345 and ids 42.\n", (5<<20)/82)
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		r.text(in)
	}
}

// containsFold finds a lower-case word in any case, wherever either case
// of its first letter repeats.
func TestContainsFold(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"", false}, {"ke", false}, {"key", true}, {"KEY", true}, {"a kEy.", true},
		{"kkkkkKKKKKkey", true}, {"KkKkKkKe", false}, {strings.Repeat("k", 5000) + "KeY", true},
		{strings.Repeat("kE", 5000), false}, {"monkey", true}, {"ky e", false},
	} {
		want := strings.Contains(strings.ToLower(tc.s), "key")
		if want != tc.want {
			t.Fatalf("bad case %q", tc.s)
		}
		if got := containsFold(tc.s, "key"); got != want {
			t.Errorf("containsFold(%.20q…, key) = %v, want %v", tc.s, got, want)
		}
	}
}

// minLen is the fewest bytes a match has, counting a rune as one byte: a
// value shorter than every rule's is not scanned, and the built-in
// secrets are all longer than that.
func TestMinLen(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want int
	}{
		{`abc`, 3}, {`a|bc`, 1}, {`x{3,5}`, 3}, {`(ab)+c?`, 2}, {`\bx*$`, 0}, {`(?i)key`, 3},
		{`[a-z]{20,}`, 20}, {`é`, 1}, {`sk-(?:proj-)?[A-Za-z0-9]{20,}`, 23},
	} {
		if got := minLen(regexp.MustCompile(tc.expr)); got != tc.want {
			t.Errorf("minLen(%s) = %d, want %d", tc.expr, got, tc.want)
		}
	}
	r := newRedactor(true, []RedactPattern{{Kind: "pin", Regexp: regexp.MustCompile(`pin \d{4}`)}})
	if r.shortest != len("pin 1234") {
		t.Errorf("shortest %d, want the custom pattern's %d", r.shortest, len("pin 1234"))
	}
	if got, _ := r.text("pin 1234"); got != "[REDACTED:pin]" {
		t.Errorf("a value as short as the shortest match: %q, want it redacted", got)
	}
}
