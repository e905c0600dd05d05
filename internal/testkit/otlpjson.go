package testkit

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// idField matches an OTLP trace or span id and its value. OTLP/JSON has no
// user-chosen object keys (attributes are {key, value} lists), so these
// keys can only be id fields.
var idField = regexp.MustCompile(`"(traceId|spanId|parentSpanId|trace_id|span_id|parent_span_id)"\s*:\s*"([^"]*)"`)

// MarshalOTLPJSON writes m as an OTLP/JSON request body, indented:
// protojson's field order, enums as numbers, and trace and span ids as hex
// where protojson writes base64.
func MarshalOTLPJSON(m proto.Message) ([]byte, error) {
	b, err := protojson.MarshalOptions{UseEnumNumbers: true}.Marshal(m)
	if err != nil {
		return nil, err
	}
	if b, err = convertIDs(b, base64ToHex); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// UnmarshalOTLPJSON decodes an OTLP/JSON body (hex ids) into m. Unlike
// convtrace's receiver it refuses unknown fields, so a test sees them.
func UnmarshalOTLPJSON(b []byte, m proto.Message) error {
	b, err := convertIDs(b, hexToBase64)
	if err != nil {
		return err
	}
	return protojson.Unmarshal(b, m)
}

// convertIDs rewrites the value of every non-empty id field with conv.
func convertIDs(b []byte, conv func(string) (string, error)) ([]byte, error) {
	var convErr error
	out := idField.ReplaceAllFunc(b, func(match []byte) []byte {
		sub := idField.FindSubmatch(match)
		if len(sub[2]) == 0 || convErr != nil {
			return match
		}
		id, err := conv(string(sub[2]))
		if err != nil {
			convErr = fmt.Errorf("%s: %w", sub[1], err)
			return match
		}
		return []byte(fmt.Sprintf("%q:%q", sub[1], id))
	})
	return out, convErr
}

func base64ToHex(s string) (string, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return "", fmt.Errorf("id %q is not base64: %w", s, err)
	}
	return hex.EncodeToString(b), nil
}

func hexToBase64(s string) (string, error) {
	b, err := hex.DecodeString(s)
	if err != nil {
		return "", fmt.Errorf("id %q is not hex: %w", s, err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}
