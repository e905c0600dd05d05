// Package otlpreceiver receives OTLP traces and logs over HTTP and gRPC and
// hands them to an Ingester, which stores them.
//
// NewHTTPHandler serves OTLP/HTTP (POST /v1/traces and /v1/logs, protobuf or
// JSON, gzip or not) and NewGRPCServer the OTLP/gRPC trace and logs
// services. Both answer as the OTLP specification asks: success only once
// the Ingester has stored the request, partial success with a rejected count
// and a message, a retryable error (HTTP 503 with Retry-After, gRPC
// Unavailable with RetryInfo) when storage failed, and a client error naming
// what is wrong with bad input (400 malformed, 413 too large after
// decompression, 415 unsupported content type or encoding).
//
// Requests are admitted against a memory budget (WithMemoryLimit) and
// answered retry-later beyond it or past a store timeout
// (WithStoreTimeout); WithToken makes both receivers and /metrics require
// a bearer token.
//
// Request bodies are decoded with package otlpwire: hex ids in OTLP/JSON,
// and strings with invalid UTF-8 repaired instead of refused, so an SDK
// that sends a bad byte does not lose its spans.
//
// Both receivers count what they see in a Prometheus registry (WithRegistry);
// NewOpsHandler serves that registry on /metrics beside /healthz and
// /readyz.
package otlpreceiver
