package query

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// ParseCursor reads a Cursor that Cursor.String wrote; "" is no cursor. A
// value it cannot read is a *ParamError naming param.
func ParseCursor(param, value string) (*Cursor, error) {
	if value == "" {
		return nil, nil
	}
	ns, id, ok := strings.Cut(value, ".")
	n, err := strconv.ParseUint(ns, 10, 64)
	raw, err2 := base64.RawURLEncoding.DecodeString(id)
	if !ok || err != nil || err2 != nil {
		return nil, BadParam(param, "%q is not a page cursor: take it from a Newer or Older link", value)
	}
	return &Cursor{LastNS: n, ID: string(raw)}, nil
}
