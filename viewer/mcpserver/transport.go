package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Transport carries JSON-RPC messages, one a line, over a reader and a
// writer: stdin and stdout for `convtrace mcp`. Unlike the SDK's
// IOTransport, whose connection ends at the first line it cannot decode,
// it answers a bad line with a JSON-RPC error and reads the next (see
// readMessage), and it sends no answer over MaxAnswerBytes.
type Transport struct {
	r io.Reader
	w io.Writer
}

var _ mcp.Transport = (*Transport)(nil)

// NewTransport returns a Transport that reads r and writes w. Closing the
// connection closes neither: a read of r under way ends when r returns.
func NewTransport(r io.Reader, w io.Writer) *Transport { return &Transport{r: r, w: w} }

// Connect starts reading lines; call it once.
func (t *Transport) Connect(context.Context) (mcp.Connection, error) {
	c := &conn{lines: make(chan line), closed: make(chan struct{}), w: t.w}
	go c.readLines(bufio.NewReaderSize(t.r, 64<<10))
	return c, nil
}

// conn is a Transport's connection. One goroutine reads lines into lines
// until r fails or ends, or the connection is closed.
type conn struct {
	lines     chan line
	closed    chan struct{}
	closeOnce sync.Once

	writeMu sync.Mutex // a message is one write of one line
	w       io.Writer
}

var _ mcp.Connection = (*conn)(nil)

// line is what readLines read: a line's text and size (readLine), or the
// read's error.
type line struct {
	text []byte
	size int
	err  error
}

// readLines sends each line of br but blank ones to Read.
func (c *conn) readLines(br *bufio.Reader) {
	for {
		text, size, err := readLine(br, MaxFrameBytes)
		if (len(text) > 0 || size > MaxFrameBytes) && !c.send(line{text: text, size: size}) {
			return
		}
		if err != nil {
			c.send(line{err: err})
			return
		}
	}
}

// send hands l to Read, and reports false when the connection closed
// first.
func (c *conn) send(l line) bool {
	select {
	case c.lines <- l:
		return true
	case <-c.closed:
		return false
	}
}

// Read returns the next message, answering each bad line before it.
func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		var l line
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case l = <-c.lines:
		}
		if l.err != nil {
			return nil, l.err
		}
		msg, bad := readMessage(l.text, l.size)
		if bad == nil {
			return msg, nil
		}
		data, err := json.Marshal(bad)
		if err != nil {
			return nil, fmt.Errorf("encode refusal: %w", err)
		}
		if err := c.writeLine(data); err != nil {
			return nil, err
		}
	}
}

// Write sends msg as encode makes it.
func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := encode(msg)
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	return c.writeLine(data)
}

// encode returns msg's line, a response bounded: its error's text cut to
// maxErrorBytes, as the SDK's errors quote what they refuse (an unknown
// method's name, say) however long, and an answer over MaxAnswerBytes
// replaced by an error that says its size.
func encode(msg jsonrpc.Message) ([]byte, error) {
	r, ok := msg.(*jsonrpc.Response)
	if !ok {
		return jsonrpc.EncodeMessage(msg)
	}
	if r.Error != nil && len(r.Error.Error()) > maxErrorBytes {
		cut := &jsonrpc.Error{Message: cutMiddle(r.Error.Error(), maxErrorBytes)}
		var we *jsonrpc.Error
		if errors.As(r.Error, &we) {
			cut.Code = we.Code
		}
		r = &jsonrpc.Response{ID: r.ID, Error: cut}
	}
	data, err := jsonrpc.EncodeMessage(r)
	if err != nil || len(data) <= MaxAnswerBytes {
		return data, err
	}
	return jsonrpc.EncodeMessage(&jsonrpc.Response{ID: r.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
		Message: fmt.Sprintf("the answer is %d bytes, over the %d this server sends: narrow the call", len(data), MaxAnswerBytes)}})
}

func (c *conn) writeLine(data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.w.Write(append(data, '\n'))
	return err
}

// Close ends Read and the reading goroutine (once its read of r returns).
func (c *conn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// SessionID is empty: a stream carries one session.
func (c *conn) SessionID() string { return "" }
