package otlpreceiver_test

import (
	"encoding/hex"

	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers of the OTLP trace protos, to build payloads the Go encoder
// would refuse to write.
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
)

func bytesField(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// rawTraceRequest is the wire form of a request with one span of
// testTraceID/testSpanID named name, with one string attribute. Nothing
// checks the strings are UTF-8.
func rawTraceRequest(name, key, value []byte) []byte {
	tid, _ := hex.DecodeString(testTraceID)
	sid, _ := hex.DecodeString(testSpanID)
	kv := bytesField(bytesField(nil, fieldKey, key), fieldValue, bytesField(nil, fieldStringValue, value))
	span := bytesField(nil, fieldTraceID, tid)
	span = bytesField(span, fieldSpanID, sid)
	span = bytesField(span, fieldName, name)
	span = bytesField(span, fieldAttributes, kv)
	return bytesField(nil, fieldResourceSpans, bytesField(nil, fieldScopeSpans, bytesField(nil, fieldSpans, span)))
}
