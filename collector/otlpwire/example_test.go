package otlpwire_test

import (
	"fmt"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"

	"github.com/convtrace/convtrace/collector/otlpwire"
)

func ExampleDecodeJSON() {
	body := []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{
		"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174",
		"name":"chat ` + "\xff" + `","kind":3,"startTimeUnixNano":"1544712660000000000"}]}]}]}`)
	var req coltracepb.ExportTraceServiceRequest
	if err := otlpwire.DecodeJSON(body, &req); err != nil {
		fmt.Println(err)
		return
	}
	s := req.GetResourceSpans()[0].GetScopeSpans()[0].GetSpans()[0]
	fmt.Printf("%x %x %q %v %d\n", s.GetTraceId(), s.GetSpanId(), s.GetName(), s.GetKind(), s.GetStartTimeUnixNano())
	// Output:
	// 5b8efff798038103d269b633813fc60c eee19b7ec3c1b174 "chat �" SPAN_KIND_CLIENT 1544712660000000000
}
