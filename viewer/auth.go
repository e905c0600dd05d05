package viewer

import (
	"crypto/subtle"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
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
		if s.readOnly {
			c.AbortWithStatusJSON(http.StatusForbidden, apiErrorBody{"this viewer is read-only (convtrace serve --read-only): the history cannot be changed through it"})
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

// allowedHost refuses (421) a request whose Host is a name the viewer does
// not answer to, so a DNS-rebound page of another site can neither read nor
// change anything. IP addresses, localhost and its subdomains, and the names
// of WithHosts pass: only a name can be rebound.
func allowedHost(names []string) gin.HandlerFunc {
	allowed := map[string]bool{}
	for _, n := range names {
		allowed[strings.ToLower(strings.TrimSuffix(n, "."))] = true
	}
	return func(c *gin.Context) {
		host := c.Request.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
		if _, err := netip.ParseAddr(host); err == nil || host == "localhost" ||
			strings.HasSuffix(host, ".localhost") || allowed[host] {
			return
		}
		msg := "this viewer does not answer to the host " + strconv.Quote(host) +
			": open it by its address or localhost, or start it with --public-url naming that host"
		if strings.HasPrefix(c.Request.URL.Path, "/api/") {
			c.AbortWithStatusJSON(http.StatusMisdirectedRequest, apiErrorBody{msg})
			return
		}
		c.Data(http.StatusMisdirectedRequest, "text/plain; charset=utf-8", []byte(msg+"\n"))
		c.Abort()
	}
}
