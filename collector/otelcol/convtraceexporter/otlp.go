package convtraceexporter

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/convtrace/convtrace/collector/otlpwire"
	"github.com/convtrace/convtrace/schema"
)

// The Ingester reads the OTLP protobuf types, and pdata keeps its own: the
// wire form is the one exact bridge between them, decoded as convtrace
// serve's receivers decode it (invalid UTF-8 repaired, not refused).

// tracesToOTLP returns td as the Ingester reads it, project set on the
// resources that name none.
func tracesToOTLP(td ptrace.Traces, project string) ([]*tracepb.ResourceSpans, error) {
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		return nil, fmt.Errorf("marshal traces: %w", err)
	}
	var data tracepb.TracesData
	if err := otlpwire.DecodeProto(b, &data); err != nil {
		return nil, err
	}
	for _, rs := range data.ResourceSpans {
		rs.Resource = withProject(rs.Resource, project)
	}
	return data.ResourceSpans, nil
}

// logsToOTLP returns ld as the Ingester reads it, project set on the
// resources that name none.
func logsToOTLP(ld plog.Logs, project string) ([]*logspb.ResourceLogs, error) {
	b, err := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	if err != nil {
		return nil, fmt.Errorf("marshal logs: %w", err)
	}
	var data logspb.LogsData
	if err := otlpwire.DecodeProto(b, &data); err != nil {
		return nil, err
	}
	for _, rl := range data.ResourceLogs {
		rl.Resource = withProject(rl.Resource, project)
	}
	return data.ResourceLogs, nil
}

// withProject returns r with convtrace.project = project added, unless
// project is empty or r names one.
func withProject(r *resourcepb.Resource, project string) *resourcepb.Resource {
	if project == "" {
		return r
	}
	if r == nil {
		r = &resourcepb.Resource{}
	}
	for _, kv := range r.Attributes {
		if kv.Key == schema.KeyProject {
			return r
		}
	}
	r.Attributes = append(r.Attributes, &commonpb.KeyValue{Key: schema.KeyProject,
		Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: project}}})
	return r
}
