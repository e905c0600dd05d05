package viewer

import "github.com/gin-gonic/gin"

// searchRoutes serves the search pages and their JSON twins.
func (s *Server) searchRoutes(app, api *gin.RouterGroup) {}
