package genai

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Marshal encodes v without escaping HTML characters: content is escaped
// where it is shown, not where it is stored. A value that cannot be
// encoded is null.
func Marshal(v any) []byte {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return []byte("null")
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// Canonical re-encodes a JSON value with sorted object keys, no
// insignificant space and numbers kept as written; text that is not JSON
// becomes a JSON string.
func Canonical(raw json.RawMessage) json.RawMessage {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return Marshal(string(raw))
	}
	return Marshal(v)
}

// String returns a JSON string's value, other values as canonical JSON
// text, and "" for null or nothing.
func String(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(Canonical(raw))
}

// StringValue returns the value of a JSON string, "" for any other value.
func StringValue(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// jsonOrString returns s itself when it is a JSON object or array, else s
// as a JSON string.
func jsonOrString(s string) json.RawMessage {
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		if json.Valid([]byte(t)) {
			return Canonical(json.RawMessage(t))
		}
	}
	return Marshal(s)
}

// firstRaw returns the value of the first key present.
func firstRaw(r map[string]json.RawMessage, keys ...string) json.RawMessage {
	for _, k := range keys {
		if v, ok := r[k]; ok {
			return v
		}
	}
	return nil
}

func firstString(r map[string]json.RawMessage, keys ...string) string {
	return String(firstRaw(r, keys...))
}
