package viewer

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
)

func TestWriteJSON(t *testing.T) {
	tests := []struct {
		name       string
		v          any
		wantStatus int
		wantBody   string // a substring
		wantLog    bool
	}{
		{"encodable", struct {
			Cost float64 `json:"cost"`
		}{0.5}, http.StatusOK, `{"cost":0.5}`, false},
		{"NaN", struct {
			Cost float64 `json:"cost"`
		}{math.NaN()}, http.StatusInternalServerError, `"error":"internal error: the answer could not be encoded as JSON"`, true},
		{"+Inf in a map", map[string]float64{"cost": math.Inf(1)}, http.StatusInternalServerError, `"error":`, true},
	}
	for _, tt := range tests {
		var logged bytes.Buffer
		s := &Server{log: slog.New(slog.NewTextHandler(&logged, nil))}
		rec := httptest.NewRecorder()
		c, _ := gin.CreateTestContext(rec)
		c.Request = httptest.NewRequest(http.MethodGet, "/api/threads", nil)
		s.writeJSON(c, http.StatusOK, tt.v)
		body := rec.Body.String()
		if rec.Code != tt.wantStatus || !strings.Contains(body, tt.wantBody) || !json.Valid(rec.Body.Bytes()) ||
			!strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
			t.Errorf("%s: writeJSON(%+v) answered %d %q (%s); want %d with %q", tt.name, tt.v, rec.Code, body, rec.Header().Get("Content-Type"), tt.wantStatus, tt.wantBody)
		}
		if got := strings.Contains(logged.String(), "/api/threads"); got != tt.wantLog {
			t.Errorf("%s: logged %q, want a log naming the path: %v", tt.name, logged.String(), tt.wantLog)
		}
	}
}
