package otlpwire

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

var jsonOptions = protojson.UnmarshalOptions{DiscardUnknown: true}

// replacement stands in for every invalid UTF-8 sequence.
var replacement = []byte("\uFFFD")

// DecodeJSON decodes an OTLP/JSON body into msg as the OTLP/HTTP
// specification writes it (hex ids, lowerCamelCase or snake_case keys,
// unknown fields ignored), and protojson's base64 ids too. Invalid UTF-8 is
// replaced with U+FFFD rather than refused (docs/design/otlp.md).
func DecodeJSON(data []byte, msg proto.Message) error {
	if !utf8.Valid(data) {
		data = bytes.ToValidUTF8(data, replacement)
	}
	if err := jsonOptions.Unmarshal(hexIDsToBase64(data), msg); err != nil {
		return fmt.Errorf("invalid OTLP/JSON %s: %w", msg.ProtoReflect().Descriptor().Name(), err)
	}
	return nil
}

// hexIDsToBase64 rewrites the hex values of the id keys (traceId, spanId,
// parentSpanId, snake_case too) to the base64 protojson reads, in one pass;
// OTLP/JSON has no user-chosen keys, so these are ids. What it does not
// understand is copied as is, for protojson to report.
func hexIDsToBase64(data []byte) []byte {
	var out []byte // nil until the first rewrite
	copied := 0    // data[:copied] is already in out
	for i := 0; i < len(data); {
		if data[i] != '"' {
			i++
			continue
		}
		end := stringEnd(data, i)
		if end < 0 {
			break
		}
		key := data[i+1 : end-1]
		i = end
		colon := skipSpace(data, end)
		if colon >= len(data) || data[colon] != ':' || !isIDKey(key) {
			continue
		}
		start := skipSpace(data, colon+1)
		if start >= len(data) || data[start] != '"' {
			continue
		}
		vend := stringEnd(data, start)
		if vend < 0 {
			break
		}
		i = vend
		raw, ok := decodeHex(data[start+1 : vend-1])
		if !ok {
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(data)+len(data)/8)
		}
		out = append(out, data[copied:start+1]...)
		out = base64.StdEncoding.AppendEncode(out, raw)
		out = append(out, '"')
		copied = vend
	}
	if out == nil {
		return data
	}
	return append(out, data[copied:]...)
}

// stringEnd returns the index just past the JSON string starting with the
// quote at data[i], or -1 when it is not terminated.
func stringEnd(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

func isIDKey(k []byte) bool {
	switch string(k) {
	case "traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id":
		return true
	}
	return false
}

// decodeHex decodes a non-empty, even-length hex string. A base64 id never
// qualifies by accident at the OTLP sizes: 16 and 8 bytes are 24 and 12
// base64 characters (with padding, which is not hex) against 32 and 16 hex
// digits.
func decodeHex(s []byte) ([]byte, bool) {
	if len(s) == 0 || len(s)%2 != 0 {
		return nil, false
	}
	raw := make([]byte, len(s)/2)
	if _, err := hex.Decode(raw, s); err != nil {
		return nil, false
	}
	return raw, true
}
