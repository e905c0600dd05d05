package llmhttp

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/convtrace/convtrace/instrument"
)

// Attributes the transport adds to the span besides those the Recorder
// writes.
const (
	keyFinishReasons = "gen_ai.response.finish_reasons"
	keyStatusCode    = "http.response.status_code"
)

// maxBody bounds the bytes of a non-streamed response kept for parsing; the
// client still reads them all.
const maxBody = 64 << 20

// Transport is an http.RoundTripper that records LLM API calls as spans.
type Transport struct {
	base http.RoundTripper
	rec  *instrument.Recorder
}

var _ http.RoundTripper = (*Transport)(nil)

type config struct {
	rec *instrument.Recorder
}

// Option configures a Transport.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithRecorder records calls with rec instead of instrument.NewRecorder(),
// which uses the global tracer provider.
func WithRecorder(rec *instrument.Recorder) Option {
	return optionFunc(func(c *config) { c.rec = rec })
}

// NewTransport wraps base, or http.DefaultTransport when base is nil, so
// that the LLM API calls made through it are recorded.
func NewTransport(base http.RoundTripper, opts ...Option) *Transport {
	if base == nil {
		base = http.DefaultTransport
	}
	var c config
	for _, o := range opts {
		o.apply(&c)
	}
	if c.rec == nil {
		c.rec = instrument.NewRecorder()
	}
	return &Transport{base: base, rec: c.rec}
}

// RoundTrip sends req through the base transport. A recognized LLM API call
// is recorded as one span that ends when the response body reaches EOF or
// is closed; anything else passes through untouched.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	a := apiOf(req)
	if a == apiNone {
		return t.base.RoundTrip(req)
	}
	body, err := readBody(req)
	if err != nil {
		return nil, err
	}
	clone := req.Clone(req.Context())
	clone.Body = io.NopCloser(bytes.NewReader(body))
	clone.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	call, ok := recognize(clone, a, body)
	if !ok {
		return t.base.RoundTrip(clone)
	}

	// The call ends when the client has read or closed the body, after
	// RoundTrip returns: the body ends it.
	ctx, rec := t.rec.Start(req.Context(), instrument.Turn{Provider: call.provider, Model: call.model, Prompt: prompt(call)})
	defer rec.EndOnPanic()
	resp, err := t.base.RoundTrip(clone.WithContext(ctx))
	if err != nil {
		rec.End(instrument.Response{}, err)
		return nil, err
	}
	resp.Body = newBody(resp, call, rec)
	return resp, nil
}

// readBody reads a request body without consuming the caller's copy: from
// GetBody when the request has one, else from Body. Either way it closes
// Body, as a RoundTripper must; the base transport gets a fresh reader.
func readBody(req *http.Request) ([]byte, error) {
	defer req.Body.Close()
	if req.GetBody != nil {
		if rc, err := req.GetBody(); err == nil {
			defer rc.Close()
			return io.ReadAll(rc)
		}
	}
	return io.ReadAll(req.Body)
}

// body passes a response body through unchanged while parsing it on the
// side; at EOF or Close, whichever comes first, it completes the answer and
// ends the call before returning, so that a tracer provider shut down
// right after the client is done still exports the call.
type body struct {
	rc     io.ReadCloser
	status int
	stream bool
	sse    sseParser
	buf    bytes.Buffer // a non-streamed body, up to maxBody
	call   request
	answer answer
	rec    *instrument.ActiveCall
	said   bool // the stream's answer has begun: its time to first token is recorded
	once   sync.Once
}

func newBody(resp *http.Response, call request, rec *instrument.ActiveCall) *body {
	b := &body{rc: resp.Body, status: resp.StatusCode, call: call, rec: rec}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	b.stream = resp.StatusCode < 400 && (mt == "text/event-stream" || (mt == "" && call.stream))
	b.sse.emit = b.event
	return b
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.feed(p[:n])
	}
	if err != nil {
		b.finish()
	}
	return n, err
}

func (b *body) Close() error {
	err := b.rc.Close()
	b.finish()
	return err
}

func (b *body) feed(p []byte) {
	if b.stream {
		b.sse.write(p)
		return
	}
	if b.buf.Len()+len(p) <= maxBody {
		b.buf.Write(p)
	}
}

func (b *body) finish() {
	b.once.Do(func() {
		b.parse()
		a := &b.answer
		span := b.rec.Span()
		span.SetAttributes(attribute.Int(keyStatusCode, b.status))
		if a.finish != "" {
			span.SetAttributes(attribute.StringSlice(keyFinishReasons, []string{a.finish}))
		}
		b.rec.End(a.response(), a.err)
	})
}

// parse completes the answer from what was read. A panic while parsing a
// hostile body is contained here, so it costs the record, never the call.
func (b *body) parse() {
	defer func() { _ = recover() }()
	if b.stream {
		b.sse.flush()
		return
	}
	data := b.buf.Bytes()
	if b.status >= 400 {
		b.answer.err = providerError(b.status, data)
		return
	}
	switch b.call.api {
	case apiChatCompletions:
		b.answer.chatCompletion(data)
	case apiMessages:
		b.answer.anthropicMessage(data)
	case apiResponses:
		b.answer.responses(data)
	}
}

func (b *body) event(name string, data []byte) {
	if bytes.Equal(bytes.TrimSpace(data), []byte("[DONE]")) {
		return
	}
	switch b.call.api {
	case apiChatCompletions:
		b.answer.chatChunk(data)
	case apiMessages:
		b.answer.anthropicEvent(data)
	case apiResponses:
		b.answer.responsesEvent(data)
	}
	if !b.said && b.answer.begun() {
		b.said = true
		b.rec.FirstToken(time.Now())
	}
}
