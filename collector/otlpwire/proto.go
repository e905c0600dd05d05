package otlpwire

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// DecodeProto decodes a binary protobuf body into msg, with invalid UTF-8
// in strings replaced by U+FFFD rather than refused (docs/design/otlp.md).
// A body malformed for any other reason returns the decoder's error.
func DecodeProto(data []byte, msg proto.Message) error {
	err := proto.Unmarshal(data, msg)
	if err == nil {
		return nil
	}
	fixed, changed, rerr := repairUTF8(nil, data, msg.ProtoReflect().Descriptor(), protowire.DefaultRecursionLimit)
	if rerr == nil && changed {
		err = proto.Unmarshal(fixed, msg)
	}
	if err != nil {
		return fmt.Errorf("invalid protobuf %s: %w", msg.ProtoReflect().Descriptor().Name(), err)
	}
	return nil
}

var errTooDeep = errors.New("exceeded maximum recursion depth")

// repairUTF8 appends to out a copy of the wire-format message b of type md
// in which every string field is valid UTF-8, walking nested messages. It
// reports whether it changed anything. Fields the descriptor does not know
// are copied untouched.
func repairUTF8(out, b []byte, md protoreflect.MessageDescriptor, depth int) ([]byte, bool, error) {
	if depth == 0 {
		return nil, false, errTooDeep
	}
	changed := false
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, false, protowire.ParseError(n)
		}
		if typ != protowire.BytesType {
			m := protowire.ConsumeFieldValue(num, typ, b[n:])
			if m < 0 {
				return nil, false, protowire.ParseError(m)
			}
			out = append(out, b[:n+m]...)
			b = b[n+m:]
			continue
		}
		v, m := protowire.ConsumeBytes(b[n:])
		if m < 0 {
			return nil, false, protowire.ParseError(m)
		}
		fd := md.Fields().ByNumber(num)
		switch {
		case fd != nil && fd.Kind() == protoreflect.StringKind && !utf8.Valid(v):
			out = protowire.AppendTag(out, num, protowire.BytesType)
			out = protowire.AppendBytes(out, bytes.ToValidUTF8(v, replacement))
			changed = true
		case fd != nil && fd.Kind() == protoreflect.MessageKind:
			sub, subChanged, err := repairUTF8(nil, v, fd.Message(), depth-1)
			if err != nil {
				return nil, false, err
			}
			if !subChanged {
				out = append(out, b[:n+m]...)
				break
			}
			out = protowire.AppendTag(out, num, protowire.BytesType)
			out = protowire.AppendBytes(out, sub)
			changed = true
		default:
			out = append(out, b[:n+m]...)
		}
		b = b[n+m:]
	}
	return out, changed, nil
}
