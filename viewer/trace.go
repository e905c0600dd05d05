package viewer

import "github.com/gin-gonic/gin"

// traceRoutes serves the trace pages and their JSON twins.
func (s *Server) traceRoutes(app, api *gin.RouterGroup) {}
