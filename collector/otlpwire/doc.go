// Package otlpwire decodes OTLP request bodies the way senders in every
// language actually write them.
//
// DecodeJSON reads OTLP/JSON, which differs from the canonical protobuf JSON
// mapping: trace and span ids are hex strings, not base64. DecodeProto reads
// binary protobuf and, where Go's decoder refuses a proto3 string that is not
// valid UTF-8 (SDKs in other languages send such strings), repairs the string
// instead of refusing the request. Both replace invalid UTF-8 with U+FFFD, so
// a request is never lost to one bad byte.
//
// The package depends on nothing else in convtrace, so both the OTLP
// receivers and the collector can use it.
package otlpwire
