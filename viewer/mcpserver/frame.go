package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// MaxFrameBytes bounds a line the server reads: a longer line is read to
// its end without being kept, and answered with a parse error.
const MaxFrameBytes = 4 << 20

// maxIDBytes bounds a message's id, which its answer repeats.
const maxIDBytes = 128

// readLine reads a line of br and returns its text without the spaces
// around it, and how many bytes the line held; the text of a line over
// limit bytes is read but not kept (nil).
func readLine(br *bufio.Reader, limit int) ([]byte, int, error) {
	var text []byte
	size := 0
	for {
		chunk, err := br.ReadSlice('\n')
		chunk = bytes.TrimSuffix(chunk, []byte{'\n'})
		size += len(chunk)
		if size <= limit {
			text = append(text, chunk...)
		} else {
			text = nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return bytes.TrimSpace(text), size, err
		}
	}
}

// readMessage decodes a line as one JSON-RPC message, or returns the error
// answer a bad line gets: a parse error for a line over MaxFrameBytes or
// not JSON; an invalid request for JSON that is not one message (a batch
// too: MCP dropped them in 2025-06-18) or whose id is over maxIDBytes.
func readMessage(text []byte, size int) (jsonrpc.Message, *refusal) {
	if size > MaxFrameBytes {
		return nil, refuse(nil, jsonrpc.CodeParseError, "parse error: a line of %d bytes, over the %d this server reads", size, MaxFrameBytes)
	}
	if err := json.Unmarshal(text, new(json.RawMessage)); err != nil {
		return nil, refuse(nil, jsonrpc.CodeParseError, "parse error: the line is not JSON: %v", err)
	}
	if text[0] != '{' {
		return nil, refuse(nil, jsonrpc.CodeInvalidRequest, "invalid request: a line holds one JSON-RPC message, an object (batches are not served)")
	}
	msg, err := jsonrpc.DecodeMessage(text)
	if err != nil {
		return nil, refuse(lineID(text), jsonrpc.CodeInvalidRequest, "invalid request: %s", cutMiddle(err.Error(), maxErrorBytes))
	}
	if n := idBytes(msg); n > maxIDBytes {
		return nil, refuse(nil, jsonrpc.CodeInvalidRequest, "invalid request: an id of %d bytes, over the %d this server reads", n, maxIDBytes)
	}
	return msg, nil
}

// idBytes is the length of msg's id when it is a string, else 0.
func idBytes(msg jsonrpc.Message) int {
	var id jsonrpc.ID
	switch m := msg.(type) {
	case *jsonrpc.Request:
		id = m.ID
	case *jsonrpc.Response:
		id = m.ID
	}
	s, _ := id.Raw().(string)
	return len(s)
}

// lineID is the id of a line that is no valid message, for its answer: a
// number, or a string of at most maxIDBytes; else nil (null).
func lineID(text []byte) json.RawMessage {
	var head struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(text, &head) != nil || len(head.ID) == 0 || len(head.ID) > maxIDBytes {
		return nil
	}
	if c := head.ID[0]; c == '"' || c == '-' || '0' <= c && c <= '9' {
		return head.ID
	}
	return nil
}

// refusal is the answer to a bad line.
type refusal struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"` // nil, sent as null, when unknown
	Error   jsonrpc.Error   `json:"error"`
}

func refuse(id json.RawMessage, code int64, format string, args ...any) *refusal {
	return &refusal{JSONRPC: "2.0", ID: id, Error: jsonrpc.Error{Code: code, Message: fmt.Sprintf(format, args...)}}
}
