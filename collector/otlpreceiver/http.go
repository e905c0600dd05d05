package otlpreceiver

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
)

// NewHTTPHandler returns the OTLP/HTTP receiver: POST /v1/traces and POST
// /v1/logs, and POST /v1/metrics (answered, not stored), bodies in application/x-protobuf or application/json,
// Content-Encoding gzip or none. A request is answered 200 only once ing
// has stored it; see the package documentation for the errors.
func NewHTTPHandler(ing Ingester, opts ...Option) http.Handler {
	r := newReceiver(ing, newConfig(opts))
	mux := http.NewServeMux()
	mux.Handle("/v1/"+traces.name, &httpEndpoint{r: r, sig: traces})
	mux.Handle("/v1/"+logs.name, &httpEndpoint{r: r, sig: logs})
	mux.Handle("/v1/"+metricPoints.name, &httpEndpoint{r: r, sig: metricPoints})
	return mux
}

// httpEndpoint serves one signal's path.
type httpEndpoint struct {
	r   *receiver
	sig *signal
}

// wireFormat is a body encoding: how requests are read and responses
// written.
type wireFormat struct {
	contentType string
	marshal     func(proto.Message) ([]byte, error)
}

var (
	protobufFormat = &wireFormat{"application/x-protobuf", proto.Marshal}
	jsonFormat     = &wireFormat{"application/json", protojson.Marshal}
)

const supportedTypes = "application/x-protobuf or application/json"

func formatOf(contentType string) *wireFormat {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return nil
	}
	switch mt {
	case "application/x-protobuf", "application/protobuf":
		return protobufFormat
	case "application/json":
		return jsonFormat
	}
	return nil
}

// requestError is a request refused before it reached the ingester.
type requestError struct {
	status int
	reason string // the metric label
	msg    string
}

func (e *requestError) Error() string { return e.msg }

func (e *httpEndpoint) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	start := time.Now()
	defer func() {
		e.r.m.duration.WithLabelValues(e.sig.name, transportHTTP).Observe(time.Since(start).Seconds())
	}()

	if !authorized(e.r.tokens, req.Header.Get("Authorization")) {
		e.r.m.rejectedRequests.WithLabelValues(e.sig.name, transportHTTP, reasonUnauthorized).Inc()
		w.Header().Set("WWW-Authenticate", `Bearer realm="convtrace"`)
		http.Error(w, "missing or wrong token: send Authorization: Bearer TOKEN", http.StatusUnauthorized)
		return
	}
	if req.Method != http.MethodPost {
		e.r.m.rejectedRequests.WithLabelValues(e.sig.name, transportHTTP, reasonMethodNotAllowed).Inc()
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, fmt.Sprintf("method %s not allowed: OTLP/HTTP exports are POST", req.Method), http.StatusMethodNotAllowed)
		return
	}
	// An unsupported type leaves no format to answer in: plain text, as the
	// OpenTelemetry Collector does.
	f := formatOf(req.Header.Get("Content-Type"))
	if f == nil {
		e.r.m.rejectedRequests.WithLabelValues(e.sig.name, transportHTTP, reasonMediaType).Inc()
		http.Error(w, fmt.Sprintf("unsupported content type %q: send %s", req.Header.Get("Content-Type"), supportedTypes), http.StatusUnsupportedMediaType)
		return
	}

	adm := e.r.adm.admit(max(req.ContentLength, 0))
	if adm == nil {
		// Read the body away, holding none of it: a connection closed on
		// a sender still writing is an error it does not retry.
		_, _ = io.Copy(io.Discard, http.MaxBytesReader(w, req.Body, e.r.maxBody))
		e.overloaded(w, f)
		return
	}
	defer adm.release()
	buf := getBuffer()
	defer putBuffer(buf)
	msg := e.sig.newRequest()
	err := e.r.readBody(w, req, buf, adm)
	if err == nil {
		err = e.decode(f, buf.Bytes(), msg)
	}
	if errors.Is(err, errOverloaded) {
		e.overloaded(w, f)
		return
	}
	var re *requestError
	if errors.As(err, &re) {
		e.r.m.rejectedRequests.WithLabelValues(e.sig.name, transportHTTP, re.reason).Inc()
		if re.reason == reasonEncoding {
			w.Header().Set("Accept-Encoding", "gzip, identity")
		}
		writeMessage(w, f, re.status, &spb.Status{Code: int32(codes.InvalidArgument), Message: re.msg})
		return
	}

	resp, err := e.r.export(req.Context(), e.sig, transportHTTP, msg)
	if err != nil {
		e.retryLater(w, f, err)
		return
	}
	writeMessage(w, f, http.StatusOK, resp)
}

// overloaded refuses a request the memory limit has no room for.
func (e *httpEndpoint) overloaded(w http.ResponseWriter, f *wireFormat) {
	e.r.m.rejectedRequests.WithLabelValues(e.sig.name, transportHTTP, reasonOverloaded).Inc()
	e.retryLater(w, f, errOverloaded)
}

// retryLater answers 503 with Retry-After, which the OTel SDKs retry.
func (e *httpEndpoint) retryLater(w http.ResponseWriter, f *wireFormat, err error) {
	secs := retryAfterSeconds(e.r.retryAfter)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	st := &spb.Status{Code: int32(codes.Unavailable), Message: err.Error()}
	if d, err := anypb.New(&errdetails.RetryInfo{RetryDelay: durationpb.New(time.Duration(secs) * time.Second)}); err == nil {
		st.Details = append(st.Details, d)
	}
	writeMessage(w, f, http.StatusServiceUnavailable, st)
}

func (e *httpEndpoint) decode(f *wireFormat, body []byte, msg proto.Message) error {
	var err error
	if f == jsonFormat {
		err = e.r.decodeJSON(e.sig, transportHTTP, body, msg)
	} else {
		err = e.r.decodeProto(e.sig, transportHTTP, body, msg)
	}
	if err != nil {
		return &requestError{http.StatusBadRequest, reasonMalformed, "malformed request body: " + err.Error()}
	}
	return nil
}

// readBody reads the request body into buf, decompressed, refusing more
// than maxBody bytes before and after decompression. Memory stays within
// the limit whatever the compression ratio: the body is streamed through
// limited readers, never read whole first, and its reservation in the
// memory limit grows as it is read (errOverloaded when it cannot).
func (r *receiver) readBody(w http.ResponseWriter, req *http.Request, buf *bytes.Buffer, adm *admitted) error {
	tooLarge := &requestError{http.StatusRequestEntityTooLarge, reasonTooLarge,
		fmt.Sprintf("request body exceeds the limit of %d bytes after decompression", r.maxBody)}
	body := http.MaxBytesReader(w, req.Body, r.maxBody)
	var src io.Reader = body
	failure := "reading request body"
	switch enc := strings.ToLower(strings.TrimSpace(req.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
		if req.ContentLength > r.maxBody {
			return tooLarge
		}
		if req.ContentLength > 0 {
			buf.Grow(int(req.ContentLength))
		}
	case "gzip", "x-gzip":
		zr, err := getGzipReader(body)
		if err != nil {
			if isMaxBytes(err) {
				return tooLarge
			}
			return &requestError{http.StatusBadRequest, reasonMalformed, "invalid gzip body: " + err.Error()}
		}
		defer putGzipReader(zr)
		src, failure = zr, "invalid gzip body"
	default:
		// RFC 9110 15.5.16: an unsupported content coding is 415, with
		// Accept-Encoding naming what would have been accepted.
		return &requestError{http.StatusUnsupportedMediaType, reasonEncoding,
			fmt.Sprintf("unsupported content encoding %q: send gzip or no encoding", enc)}
	}
	n, err := buf.ReadFrom(&meteredReader{r: io.LimitReader(src, r.maxBody+1), t: adm})
	switch {
	case errors.Is(err, errOverloaded):
		return err
	case isMaxBytes(err) || n > r.maxBody:
		return tooLarge
	case err != nil:
		return &requestError{http.StatusBadRequest, reasonMalformed, failure + ": " + err.Error()}
	}
	return nil
}

func isMaxBytes(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}

func retryAfterSeconds(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
}

func writeMessage(w http.ResponseWriter, f *wireFormat, code int, msg proto.Message) {
	b, err := f.marshal(msg)
	if err != nil {
		http.Error(w, "encoding the response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", f.contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// Buffers and gzip readers are reused across requests: a busy receiver
// would otherwise allocate a body-sized buffer and a gzip window per
// request. Decoding copies every string and byte slice out of the buffer,
// so it can be reused once the request is decoded.
var (
	bufferPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}
	gzipPool   sync.Pool
)

func getBuffer() *bytes.Buffer { return bufferPool.Get().(*bytes.Buffer) }

// pooledBufferCap is the largest buffer kept for reuse: a pool of
// buffers that grew to large bodies would hold their memory forever.
const pooledBufferCap = 1 << 20

func putBuffer(b *bytes.Buffer) {
	if b.Cap() > pooledBufferCap {
		return
	}
	b.Reset()
	bufferPool.Put(b)
}

func getGzipReader(r io.Reader) (*gzip.Reader, error) {
	if zr, ok := gzipPool.Get().(*gzip.Reader); ok {
		if err := zr.Reset(r); err != nil {
			return nil, err
		}
		return zr, nil
	}
	return gzip.NewReader(r)
}

func putGzipReader(zr *gzip.Reader) { gzipPool.Put(zr) }
