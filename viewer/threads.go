package viewer

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// threadsRoutes serves the threads list and its JSON twin.
func (s *Server) threadsRoutes(app, api *gin.RouterGroup) {
	app.GET("/", s.threadsPage)
	api.GET("/threads", s.apiThreads)
}

// threadsPage renders the threads list, newest first.
func (s *Server) threadsPage(c *gin.Context) {
	threads, err := s.store.threads(c.Request.Context())
	if err != nil {
		s.pageError(c, err)
		return
	}
	s.html(c, http.StatusOK, "threads.html", threads)
}

// apiThreads answers GET /api/threads: {"threads": [...]}, the data of /.
func (s *Server) apiThreads(c *gin.Context) {
	threads, err := s.store.threads(c.Request.Context())
	if err != nil {
		s.apiError(c, err)
		return
	}
	c.JSON(http.StatusOK, struct {
		Threads []Thread `json:"threads"`
	}{threads})
}
