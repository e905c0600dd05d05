package viewer

import (
	"crypto/subtle"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"
)

// tokenCookie carries the token of a browser that opened the viewer with
// ?token=.
const tokenCookie = "convtrace_token"

// requireToken lets a request through when token is empty, or when it
// carries the token as "Authorization: Bearer TOKEN", in the viewer's
// cookie, or as ?token= on a GET, which sets the cookie and redirects to
// the same URL without it (so the token leaves the address bar and the
// history). Anything else gets 401.
func requireToken(token string) gin.HandlerFunc {
	want := []byte(token)
	matches := func(got string) bool {
		return got != "" && subtle.ConstantTimeCompare([]byte(got), want) == 1
	}
	return func(c *gin.Context) {
		if token == "" {
			return
		}
		if auth, ok := strings.CutPrefix(c.GetHeader("Authorization"), "Bearer "); ok && matches(strings.TrimSpace(auth)) {
			return
		}
		if ck, err := c.Cookie(tokenCookie); err == nil && matches(ck) {
			return
		}
		if q := c.Query("token"); c.Request.Method == http.MethodGet && matches(q) {
			http.SetCookie(c.Writer, &http.Cookie{
				Name: tokenCookie, Value: token, Path: "/",
				HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: c.Request.TLS != nil,
			})
			u := *c.Request.URL
			v := u.Query()
			v.Del("token")
			u.RawQuery = v.Encode()
			c.Redirect(http.StatusSeeOther, (&url.URL{Path: u.Path, RawPath: u.RawPath, RawQuery: u.RawQuery}).String())
			c.Abort()
			return
		}
		c.Header("WWW-Authenticate", `Bearer realm="convtrace"`)
		const msg = "this viewer needs its token: open it once with ?token=TOKEN, or send Authorization: Bearer TOKEN"
		if strings.HasPrefix(c.Request.URL.Path, "/api/") {
			c.AbortWithStatusJSON(http.StatusUnauthorized, apiErrorBody{msg})
			return
		}
		c.Data(http.StatusUnauthorized, "text/plain; charset=utf-8", []byte(msg+"\n"))
		c.Abort()
	}
}

// sameOrigin refuses requests that change something (any method but GET,
// HEAD and OPTIONS) unless they come from the viewer's own pages: the
// standard library's cross-origin protection checks Sec-Fetch-Site and
// Origin against Host, and a JSON body is required, which no cross-site
// HTML form can send.
func (s *Server) sameOrigin() gin.HandlerFunc {
	cop := http.NewCrossOriginProtection()
	return func(c *gin.Context) {
		switch c.Request.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			return
		}
		if err := cop.Check(c.Request); err != nil {
			c.AbortWithStatusJSON(http.StatusForbidden, apiErrorBody{"cross-origin request refused: " + err.Error()})
			return
		}
		mt, _, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
		if err != nil || mt != "application/json" {
			c.AbortWithStatusJSON(http.StatusUnsupportedMediaType, apiErrorBody{"send the request body as application/json"})
			return
		}
	}
}
