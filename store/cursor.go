package store

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/convtrace/convtrace/store/page"
)

// ParseCursor reads a Cursor that Cursor.String wrote; "" is no cursor. A
// value it cannot read is a *page.ParamError naming param.
func ParseCursor(param, value string) (*Cursor, error) {
	if value == "" {
		return nil, nil
	}
	ns, id, ok := strings.Cut(value, ".")
	n, err := strconv.ParseUint(ns, 10, 64)
	raw, err2 := base64.RawURLEncoding.DecodeString(id)
	if !ok || err != nil || err2 != nil {
		return nil, page.BadParam(param, "%q is not a page cursor: take it from a Newer or Older link", value)
	}
	return &Cursor{LastNS: n, ID: string(raw)}, nil
}

// String writes where a page of search results ends as start_ns.turn_id,
// what ParseSearchCursor reads: text, so that no JSON reader rounds the
// nanoseconds to a float's 53 bits.
func (c SearchCursor) String() string {
	return strconv.FormatUint(c.StartNS, 10) + "." + c.TurnID
}

// ParseSearchCursor reads a cursor SearchCursor.String wrote; "" is none. A
// value it cannot read is a *page.ParamError naming param.
func ParseSearchCursor(param, value string) (*SearchCursor, error) {
	if value == "" {
		return nil, nil
	}
	ns, id, ok := strings.Cut(value, ".")
	start, err := strconv.ParseUint(ns, 10, 64)
	if !ok || err != nil || id == "" {
		return nil, page.BadParam(param, "%q is not a page cursor: use the next or prev value of a search", value)
	}
	return &SearchCursor{StartNS: start, TurnID: id}, nil
}
