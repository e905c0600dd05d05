package store

import (
	"context"
	"fmt"
	"strings"
)

// A sqlText is SQL with the arguments of its ? in order: what every
// composed query is built as, so that no caller counts positional holes.
type sqlText struct {
	text string
	args []any
}

// arg is one bound value as SQL: ? and v.
func arg(v any) sqlText { return sqlText{"?", []any{v}} }

// raw is SQL that binds nothing.
func raw(sql string) sqlText { return sqlText{text: sql} }

// holes names what fills the holes of a template.
type holes map[string]sqlText

// sqlf fills each {name} hole of template with p[name], text and
// arguments, in the order the holes appear; a hole may appear more than
// once. A hole without a part is a bug, which every query's golden file
// (sql_golden_test.go) would show: it panics.
func sqlf(template string, p holes) sqlText {
	var (
		b    strings.Builder
		args []any
	)
	rest := template
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i+1:], '}')
		if j < 0 || !isHole(rest[i+1:i+1+j]) {
			// Not a hole: a brace of the SQL itself.
			b.WriteString(rest[:i+1])
			rest = rest[i+1:]
			continue
		}
		name := rest[i+1 : i+1+j]
		part, ok := p[name]
		if !ok {
			panic(fmt.Sprintf("sql: no part for {%s} in %.80q", name, template))
		}
		b.WriteString(rest[:i])
		b.WriteString(part.text)
		args = append(args, part.args...)
		rest = rest[i+j+2:]
	}
	b.WriteString(rest)
	return sqlText{b.String(), args}
}

// isHole reports whether name, between braces, names a hole: a lower-case
// identifier. SQL has no such braces (its maps and tuples hold quotes,
// digits or spaces).
func isHole(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if (r < 'a' || r > 'z') && r != '_' {
			return false
		}
	}
	return true
}

// exec runs q on db.
func (q sqlText) exec(ctx context.Context, db DB) error { return db.Exec(ctx, q.text, q.args...) }

// and is the conditions cs joined with AND, one a line.
func and(cs ...sqlText) sqlText {
	var q sqlText
	for i, c := range cs {
		if i > 0 {
			q.text += "\n  AND "
		}
		q.text += c.text
		q.args = append(q.args, c.args...)
	}
	return q
}
