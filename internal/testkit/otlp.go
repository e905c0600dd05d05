package testkit

import "google.golang.org/protobuf/encoding/protowire"

// Field numbers of the OTLP trace protos the payload uses.
const (
	fieldResourceSpans = 1 // ExportTraceServiceRequest
	fieldScopeSpans    = 2 // ResourceSpans
	fieldSpans         = 2 // ScopeSpans
	fieldTraceID       = 1 // Span
	fieldSpanID        = 2
	fieldName          = 5
	fieldAttributes    = 9
	fieldKey           = 1 // KeyValue
	fieldValue         = 2
	fieldStringValue   = 1 // AnyValue
	fieldKvlistValue   = 6
	fieldValues        = 1 // KeyValueList
)

// RawTraceRequest returns the wire form of an ExportTraceServiceRequest
// with one span, every string written as given, invalid UTF-8 included.
// The span has the ids and name given, the string attribute key=value, the
// same attribute again inside a kvlist attribute named "nested", and an
// unknown field 99.
func RawTraceRequest(traceID, spanID, name, key, value []byte) []byte {
	nested := bytesField(nil, fieldKvlistValue, bytesField(nil, fieldValues, keyValue(key, value)))
	span := bytesField(nil, fieldTraceID, traceID)
	span = bytesField(span, fieldSpanID, spanID)
	span = bytesField(span, fieldName, name)
	span = bytesField(span, fieldAttributes, keyValue(key, value))
	span = bytesField(span, fieldAttributes, bytesField(bytesField(nil, fieldKey, []byte("nested")), fieldValue, nested))
	span = protowire.AppendTag(span, 99, protowire.VarintType)
	span = protowire.AppendVarint(span, 7)
	return bytesField(nil, fieldResourceSpans, bytesField(nil, fieldScopeSpans, bytesField(nil, fieldSpans, span)))
}

func keyValue(key, value []byte) []byte {
	return bytesField(bytesField(nil, fieldKey, key), fieldValue, bytesField(nil, fieldStringValue, value))
}

func bytesField(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}
