package viewer_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/viewer"
)

// With a token, a request gets through with the header or the cookie that
// opening the viewer once with ?token= sets; the redirect drops the token
// from the URL. Static files need none.
func TestToken(t *testing.T) {
	conn, _ := testkit.Open(t)
	h := viewer.New(conn, viewer.WithToken("tok-1")).Handler()

	tests := []struct {
		name, path, header, cookie string
		want                       int
		wantBody                   string
	}{
		{"no token, page", "/", "", "", http.StatusUnauthorized, "?token="},
		{"no token, api", "/api/threads", "", "", http.StatusUnauthorized, `"error"`},
		{"wrong bearer", "/api/threads", "Bearer tok-2", "", http.StatusUnauthorized, ""},
		{"bearer", "/api/threads", "Bearer tok-1", "", http.StatusOK, `"threads"`},
		{"cookie", "/", "", "tok-1", http.StatusOK, "Threads"},
		{"wrong cookie", "/", "", "tok-", http.StatusUnauthorized, ""},
		{"unknown route needs the token too", "/nowhere", "", "", http.StatusUnauthorized, ""},
		{"static needs none", "/static/app.css", "", "", http.StatusOK, ""},
	}
	for _, tt := range tests {
		req := newRequest(http.MethodGet, tt.path, nil)
		if tt.header != "" {
			req.Header.Set("Authorization", tt.header)
		}
		if tt.cookie != "" {
			req.AddCookie(&http.Cookie{Name: "convtrace_token", Value: tt.cookie})
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tt.want || !strings.Contains(rec.Body.String(), tt.wantBody) {
			t.Errorf("%s: GET %s: status %d body %q, want %d containing %q", tt.name, tt.path, rec.Code, rec.Body.String(), tt.want, tt.wantBody)
		}
	}

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, newRequest(http.MethodGet, "/threads/a%2Fb?token=tok-1&phase=plan", nil))
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/threads/a%2Fb?phase=plan" {
		t.Errorf("GET ?token=: status %d Location %q, want 303 to /threads/a%%2Fb?phase=plan", rec.Code, rec.Header().Get("Location"))
	}
	var cookie *http.Cookie
	for _, c := range rec.Result().Cookies() {
		if c.Name == "convtrace_token" {
			cookie = c
		}
	}
	if cookie == nil || cookie.Value != "tok-1" || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode {
		t.Errorf("cookie set by ?token= = %+v, want tok-1, HttpOnly, SameSite=Strict", cookie)
	}
}
