package otlpreceiver_test

import (
	"encoding/hex"

	"github.com/convtrace/convtrace/internal/testkit"
)

// rawTraceRequest is the wire form of a request with one span of
// testTraceID/testSpanID named name, with the string attribute key=value.
// Nothing checks the strings are UTF-8.
func rawTraceRequest(name, key, value []byte) []byte {
	tid, _ := hex.DecodeString(testTraceID)
	sid, _ := hex.DecodeString(testSpanID)
	return testkit.RawTraceRequest(tid, sid, name, key, value)
}
