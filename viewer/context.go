package viewer

import "github.com/gin-gonic/gin"

// contextRoutes serves a thread's recent context in chat format.
func (s *Server) contextRoutes(api *gin.RouterGroup) {}
