package viewer

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/convtrace/convtrace/schema/pricing"
	"github.com/convtrace/convtrace/store"
)

//go:embed static
var staticFiles embed.FS

// Server serves the viewer's pages and JSON API.
type Server struct {
	db       store.DB
	store    store.Store
	log      *slog.Logger
	pages    *pages
	token    string
	readOnly bool
	hosts    []string
	pricer   pricing.Prices
	engine   *gin.Engine
	feed     *feed
}

// New returns a viewer reading from db. Its templates are parsed here, once.
func New(db store.DB, opts ...Option) *Server {
	cfg := newConfig(opts)
	st := store.New(db, cfg.threadLimit, cfg.interruptedAfter)
	if cfg.dial != nil {
		st = st.WithReplicas(cfg.dial)
	}
	s := &Server{
		db:       db,
		store:    st,
		log:      cfg.logger,
		pages:    parsePages(cfg.readOnly),
		token:    cfg.token,
		readOnly: cfg.readOnly,
		hosts:    cfg.hosts,
	}
	s.pricer = cfg.pricer
	s.feed = newFeed(st, cfg.logger, cfg.feedPoll, cfg.feedBeat)
	s.engine = s.router()
	return s
}

// Handler returns the viewer's HTTP handler, a gin engine.
func (s *Server) Handler() http.Handler { return s.engine }

func (s *Server) router() *gin.Engine {
	// Release mode before gin.New: in debug mode gin prints every route and
	// a warning to stdout. The mode is process-wide; the viewer never wants
	// debug output.
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	_ = r.SetTrustedProxies(nil) // the viewer never reads the client IP
	// A thread id may hold a slash: match routes on the escaped path and
	// unescape the parameter.
	r.UseRawPath = true
	r.UnescapePathValues = true
	r.Use(gin.CustomRecoveryWithWriter(nil, s.recovered), securityHeaders, allowedHost(s.hosts), s.limitParams)

	static, err := fs.Sub(staticFiles, "static")
	if err != nil {
		panic(err) // embedded at build time
	}
	// The embedded files only: a folder is not listed. Embedded files
	// have no modification time, so each gets an ETag of its content
	// instead: every page loads them all, and a browser then revalidates
	// them with a 304 rather than downloading them again.
	tags := staticETags(static)
	files := http.StripPrefix("/static", http.FileServerFS(static))
	r.GET("/static/*file", func(c *gin.Context) {
		name := c.Param("file")
		if strings.HasSuffix(name, "/") {
			s.notFound(c)
			return
		}
		if tag, ok := tags[strings.TrimPrefix(name, "/")]; ok {
			c.Header("ETag", tag)
			c.Header("Cache-Control", "no-cache")
		}
		files.ServeHTTP(c.Writer, c.Request)
	})

	// Everything but the static files needs the token, when one is set;
	// every request that changes something must come from the viewer's own
	// pages.
	app := r.Group("/", requireToken(s.token), s.sameOrigin())
	api := app.Group("/api")
	s.threadsRoutes(app, api)
	s.threadRoutes(app, api)
	s.traceRoutes(app, api)
	s.searchRoutes(app, api)
	s.costRoutes(app, api)
	s.graphRoutes(app, api)
	s.compareRoutes(app, api)
	s.latencyRoutes(app, api)
	s.contextRoutes(api)
	s.transferRoutes(api)
	s.eventsRoutes(api)
	r.NoRoute(requireToken(s.token), s.notFound)
	return r
}

// staticETags returns a strong ETag, the hash of its content, of every
// file of fsys by name.
func staticETags(fsys fs.FS) map[string]string {
	tags := map[string]string{}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		tags[name] = `"` + hex.EncodeToString(sum[:8]) + `"`
		return nil
	})
	if err != nil {
		panic(err) // embedded at build time
	}
	return tags
}

// contentSecurityPolicy allows only the viewer's own scripts and
// stylesheets: no inline script, no inline style, nothing from elsewhere.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

func securityHeaders(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	c.Next()
}

func (s *Server) recovered(c *gin.Context, rec any) {
	s.log.ErrorContext(c.Request.Context(), "viewer: handler panicked", "path", c.Request.URL.Path, "panic", rec)
	c.AbortWithStatus(http.StatusInternalServerError)
}
