package collector

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync/atomic"
	"unicode"

	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/convtrace/convtrace/schema"
)

// Secrets are replaced by a marker naming their kind, [REDACTED:openai_key],
// by the writer for every row and by SpoolSpans before the disk; RE2
// patterns keep it linear in the content (docs/design/writer.md).

// RedactPattern is one kind of secret: what Regexp matches is replaced by
// [REDACTED:Kind], or, when Regexp has a capture group, what its first
// group matched (say, the value after a key name).
type RedactPattern struct {
	Kind   string
	Regexp *regexp.Regexp
}

// rule is a pattern as the redactor applies it, with its count.
type rule struct {
	pattern
	marker string
	re     *regexp.Regexp
	count  *atomic.Int64 // shared by the rules of one kind
}

// pattern is what a rule matches. Go's regexp skips quickly to where a
// leading literal occurs but steps through every byte when none leads
// (\b, (?i)): a built-in pattern leads with its literal and the checks
// that would have come first follow it, so ordinary text of megabytes is
// scanned in milliseconds.
type pattern struct {
	kind, expr string
	// wordStart: a match preceded by a letter, digit or _ is part of a
	// longer word (task-…), not a secret.
	wordStart bool
	// hint, when set, is a word (lower case) every match contains in some
	// case: text without it is not scanned.
	hint string
	// secret tells a secret from ordinary text the pattern also matches;
	// nil: every match is one.
	secret func(string) bool
}

// builtinPatterns are the well-known secrets, in the order they are
// applied: a more specific pattern before one that would match part of it
// (sk-ant- before sk-, a key before the bearer header that carries it).
var builtinPatterns = []pattern{
	{kind: "private_key", expr: `-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\:,-]*)`},
	{kind: "anthropic_key", expr: `sk-ant-[A-Za-z0-9_-]{20,}`, wordStart: true},
	{kind: "openai_key", expr: `sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`, wordStart: true, secret: randomToken},
	{kind: "google_api_key", expr: `AIza[0-9A-Za-z_-]{35}`, wordStart: true},
	{kind: "aws_access_key_id", expr: `AKIA[A-Z2-7]{16}\b`, wordStart: true},
	{kind: "aws_access_key_id", expr: `ASIA[A-Z2-7]{16}\b`, wordStart: true},
	{kind: "aws_secret_access_key", expr: `(?i)aws_?secret_?access_?key["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})`, hint: "key"},
	{kind: "github_token", expr: `gh[pousr]_[A-Za-z0-9]{36}`, wordStart: true},
	{kind: "github_token", expr: `github_pat_[A-Za-z0-9_]{22,}`, wordStart: true},
	{kind: "bearer_token", expr: `(?i)authorization["']?\s*[:=]\s*["']?bearer\s+([A-Za-z0-9._~+/-]{8,}=*)`, hint: "bearer"},
	{kind: "bearer_token", expr: `(?i)\bbearer\s+([A-Za-z0-9._~+/-]{16,}=*)`, hint: "bearer", secret: hasDigit},
}

// redactor replaces secrets in rows. A nil redactor keeps them as they are.
type redactor struct {
	rules  []rule
	counts map[string]*atomic.Int64
	// shortest is the fewest bytes a match of any rule has: shorter
	// values (most attributes) hold no secret and are not scanned.
	shortest int
}

// newRedactor returns the redactor of the built-in patterns followed by
// extra, or nil when off.
func newRedactor(on bool, extra []RedactPattern) *redactor {
	if !on {
		return nil
	}
	r := &redactor{counts: map[string]*atomic.Int64{}, shortest: math.MaxInt}
	add := func(p pattern, re *regexp.Regexp) {
		if r.counts[p.kind] == nil {
			r.counts[p.kind] = new(atomic.Int64)
		}
		r.rules = append(r.rules, rule{pattern: p, marker: "[REDACTED:" + p.kind + "]", re: re, count: r.counts[p.kind]})
		r.shortest = min(r.shortest, minLen(re))
	}
	for _, p := range builtinPatterns {
		add(p, regexp.MustCompile(p.expr))
	}
	for _, p := range extra {
		add(pattern{kind: p.Kind, expr: p.Regexp.String()}, p.Regexp)
	}
	return r
}

// minLen is the fewest bytes a match of re has.
func minLen(re *regexp.Regexp) int {
	parsed, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return 0 // compiled already: cannot happen
	}
	return syntaxMinLen(parsed)
}

func syntaxMinLen(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune) // a byte a rune at least
	case syntax.OpCharClass, syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		return 1
	case syntax.OpCapture, syntax.OpPlus:
		return syntaxMinLen(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min * syntaxMinLen(re.Sub[0])
	case syntax.OpConcat:
		n := 0
		for _, sub := range re.Sub {
			n += syntaxMinLen(sub)
		}
		return n
	case syntax.OpAlternate:
		n := math.MaxInt
		for _, sub := range re.Sub {
			n = min(n, syntaxMinLen(sub))
		}
		return n
	}
	return 0 // empty, optional, repeated from zero, anchors and boundaries
}

// stats returns how many secrets of each kind were replaced, every kind
// named, nil when redaction is off.
func (r *redactor) stats() map[string]int64 {
	if r == nil {
		return nil
	}
	m := make(map[string]int64, len(r.counts))
	for k, c := range r.counts {
		m[k] = c.Load()
	}
	return m
}

// text returns s with its secrets replaced, and whether any was.
func (r *redactor) text(s string) (string, bool) {
	if len(s) < r.shortest {
		return s, false
	}
	changed := false
	for i := range r.rules {
		var n bool
		if s, n = r.rules[i].replace(s); n {
			changed = true
		}
	}
	return s, changed
}

// replace replaces the rule's secrets in s: each match, or its first group.
func (ru *rule) replace(s string) (string, bool) {
	if !ru.mayMatch(s) {
		return s, false
	}
	var locs [][]int
	if ru.re.NumSubexp() > 0 {
		locs = ru.re.FindAllStringSubmatchIndex(s, -1)
	} else {
		locs = ru.re.FindAllStringIndex(s, -1)
	}
	var (
		b    strings.Builder
		last int
		n    int64
	)
	for _, m := range locs {
		start, end := m[0], m[1]
		if len(m) >= 4 {
			if m[2] < 0 {
				continue
			}
			start, end = m[2], m[3]
		}
		if start == end || ru.wordStart && m[0] > 0 && isWordByte(s[m[0]-1]) || ru.secret != nil && !ru.secret(s[start:end]) {
			continue
		}
		if n == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:start])
		b.WriteString(ru.marker)
		last = end
		n++
	}
	if n == 0 {
		return s, false
	}
	b.WriteString(s[last:])
	ru.count.Add(n)
	return b.String(), true
}

// mayMatch reports whether s holds the rule's leading literal and its
// hint, without which it holds no match.
func (ru *rule) mayMatch(s string) bool {
	prefix, _ := ru.re.LiteralPrefix()
	return strings.Contains(s, prefix) && (ru.hint == "" || containsFold(s, ru.hint))
}

// attrs returns as with secrets in its values replaced: a copy when any
// was, as the slice may be shared with the span it was mapped from.
func (r *redactor) attrs(as []schema.Attr) []schema.Attr {
	out := as
	for i := range as {
		if v, ok := r.text(as[i].Value); ok {
			if &out[0] == &as[0] {
				out = slices.Clone(as)
			}
			out[i].Value = v
		}
	}
	return out
}

// item redacts the rows of an item before they are queued: the content,
// errors and attributes of turns, the attributes and status of spans, and
// the OTLP records staged to be joined.
func (r *redactor) item(it *item) {
	if r == nil {
		return
	}
	r.rows(it.turns, it.spans)
	for i := range it.staged {
		r.staged(&it.staged[i])
	}
}

// rows redacts turns and spans in place.
func (r *redactor) rows(turns []schema.Turn, spans []schema.Span) {
	if r == nil {
		return
	}
	for i := range turns {
		t := &turns[i]
		t.Content, _ = r.text(t.Content)
		t.Error, _ = r.text(t.Error)
		t.Attributes = r.attrs(t.Attributes)
	}
	for i := range spans {
		s := &spans[i]
		s.StatusMsg, _ = r.text(s.StatusMsg)
		s.Attributes = r.attrs(s.Attributes)
		s.Resource = r.attrs(s.Resource)
	}
}

// staged redacts every string of a staged OTLP record (attributes, log
// bodies, event attributes, status messages), encoding it anew when one
// changed. Its record id stays the hash of what was received, so a record
// delivered twice is still one record. Strings are stored as they are in
// the encoded record, so one that no rule may match is not decoded.
func (r *redactor) staged(st *schema.Staged) {
	raw := string(st.Payload)
	var m proto.Message
	switch {
	case !slices.ContainsFunc(r.rules, func(ru rule) bool { return ru.mayMatch(raw) }):
		return
	case st.Kind == schema.StagedSpan:
		m = &tracepb.ResourceSpans{}
	case st.Kind == schema.StagedLog:
		m = &logspb.ResourceLogs{}
	default:
		return
	}
	if err := proto.Unmarshal(st.Payload, m); err != nil {
		return // marshalled by stagedRow: cannot happen
	}
	if !r.message(m.ProtoReflect()) {
		return
	}
	payload, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return
	}
	st.Payload = payload
}

// message redacts the strings of m and the messages it holds, and reports
// whether any changed.
func (r *redactor) message(m protoreflect.Message) bool {
	changed := false
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				changed = r.message(l.Get(i).Message()) || changed
			}
		case fd.IsList() || fd.IsMap(): // OTLP has no lists of strings nor maps
		case fd.Kind() == protoreflect.MessageKind:
			changed = r.message(v.Message()) || changed
		case fd.Kind() == protoreflect.StringKind:
			if s, ok := r.text(v.String()); ok {
				m.Set(fd, protoreflect.ValueOfString(s))
				changed = true
			}
		}
		return true
	})
	return changed
}

// kindName is what a pattern's kind may be: it becomes part of the marker
// and a metric label.
var kindName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// ParseRedactPatterns reads user patterns, one a line: a kind name
// (letters, digits, _ . -), blank space and a Go regexp, such as
// `password (?i)password\s*[:=]\s*(\S+)`. Blank lines and # lines are
// skipped; a regexp that matches empty text is refused.
func ParseRedactPatterns(r io.Reader) ([]RedactPattern, error) {
	var ps []RedactPattern
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.IndexFunc(line, unicode.IsSpace)
		if i < 0 {
			return nil, fmt.Errorf("line %d: want a kind name, blank space and a regexp", n)
		}
		kind, expr := line[:i], strings.TrimSpace(line[i:])
		if !kindName.MatchString(kind) {
			return nil, fmt.Errorf("line %d: kind %q: use letters, digits, _ . - (at most 64)", n, kind)
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if re.MatchString("") {
			return nil, fmt.Errorf("line %d: %q matches empty text", n, expr)
		}
		ps = append(ps, RedactPattern{Kind: kind, Regexp: re})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return ps, nil
}

// LoadRedactPatterns reads a patterns file (see ParseRedactPatterns).
func LoadRedactPatterns(path string) ([]RedactPattern, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("redact patterns: %w", err)
	}
	defer f.Close()
	ps, err := ParseRedactPatterns(f)
	if err != nil {
		return nil, fmt.Errorf("redact patterns %s: %w", path, err)
	}
	return ps, nil
}
