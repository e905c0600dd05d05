package otlpreceiver_test

import (
	"context"
	"net/http"
	"testing"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/convtrace/convtrace/collector/otlpreceiver"
)

// metricsRequest is what Claude Code exports: delta sums of cost and
// tokens, one point each.
func metricsRequest() *colmetricspb.ExportMetricsServiceRequest {
	point := &metricspb.NumberDataPoint{Value: &metricspb.NumberDataPoint_AsDouble{AsDouble: 0.01282}}
	sum := &metricspb.Metric{Name: "claude_code.cost.usage", Unit: "USD", Data: &metricspb.Metric_Sum{Sum: &metricspb.Sum{
		AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA, IsMonotonic: true,
		DataPoints: []*metricspb.NumberDataPoint{point, point}}}}
	return &colmetricspb.ExportMetricsServiceRequest{ResourceMetrics: []*metricspb.ResourceMetrics{{
		ScopeMetrics: []*metricspb.ScopeMetrics{{Metrics: []*metricspb.Metric{sum}}}}}}
}

// OTLP metrics are answered as stored, in either encoding and over gRPC,
// and never reach the ingester; a malformed body is still refused.
func TestMetricsAnsweredNotStored(t *testing.T) {
	pb, err := proto.Marshal(metricsRequest())
	if err != nil {
		t.Fatal(err)
	}
	js, err := protojson.Marshal(metricsRequest())
	if err != nil {
		t.Fatal(err)
	}
	ing := &fakeIngester{}
	h := otlpreceiver.NewHTTPHandler(ing)
	for _, c := range []struct {
		name, contentType string
		body              []byte
		want              int
	}{
		{"protobuf", "application/x-protobuf", pb, http.StatusOK},
		{"json", "application/json", js, http.StatusOK},
		{"malformed", "application/json", []byte("{"), http.StatusBadRequest},
	} {
		rec := serve(h, request{path: "/v1/metrics", contentType: c.contentType, body: c.body})
		if rec.Code != c.want {
			t.Errorf("%s: %d %q, want %d", c.name, rec.Code, rec.Body, c.want)
		}
		if c.want == http.StatusOK {
			var resp colmetricspb.ExportMetricsServiceResponse
			if err := unmarshalAs(c.contentType, rec.Body.Bytes(), &resp); err != nil || resp.GetPartialSuccess() != nil {
				t.Errorf("%s: response %q (%v), want an ExportMetricsServiceResponse with no partial success", c.name, rec.Body, err)
			}
		}
	}

	addr := startGRPC(t, ing)
	client := colmetricspb.NewMetricsServiceClient(dial(t, addr))
	if resp, err := client.Export(context.Background(), metricsRequest()); err != nil || resp.GetPartialSuccess() != nil {
		t.Errorf("gRPC metrics export: %v, %v; want success", resp, err)
	}
	if ing.callCount() != 0 {
		t.Errorf("the ingester was called %d times for metrics", ing.callCount())
	}
}

func unmarshalAs(contentType string, body []byte, m proto.Message) error {
	if contentType == "application/json" {
		return protojson.Unmarshal(body, m)
	}
	return proto.Unmarshal(body, m)
}
