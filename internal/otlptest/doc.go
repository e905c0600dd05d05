// Package otlptest builds OTLP payloads for tests that the Go protobuf
// encoder refuses to write, such as strings that are not valid UTF-8, as
// SDKs in other languages may send them.
package otlptest
