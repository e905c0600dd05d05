package llmhttp

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"

	"github.com/convtrace/convtrace/schema/genai"
)

// api is a provider API whose calls the transport understands.
type api int

const (
	apiNone api = iota
	apiChatCompletions
	apiResponses
	apiMessages
)

// request is what the transport learned from a recognized request body.
type request struct {
	api      api
	provider string
	model    string
	stream   bool
	body     map[string]json.RawMessage
}

// apiOf says which API a request's method and path might call; apiNone
// for a request the transport passes through untraced without reading it.
func apiOf(req *http.Request) api {
	if req.Method != http.MethodPost || req.URL == nil || req.Body == nil || req.Body == http.NoBody {
		return apiNone
	}
	path := strings.TrimSuffix(req.URL.Path, "/")
	switch {
	case strings.HasSuffix(path, "/chat/completions"):
		return apiChatCompletions
	case strings.HasSuffix(path, "/v1/responses") || strings.HasSuffix(path, "/openai/responses"):
		return apiResponses
	case strings.HasSuffix(path, "/v1/messages"):
		return apiMessages
	}
	return apiNone
}

// recognize returns the call a request to API a makes. The body must agree
// with the path: a JSON object with a model and messages (or input).
func recognize(req *http.Request, a api, body []byte) (request, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil || m == nil {
		return request{}, false
	}
	r := request{api: a, body: m, model: genai.StringValue(m["model"])}
	switch a {
	case apiChatCompletions, apiMessages:
		if _, ok := m["messages"]; !ok || r.model == "" {
			return request{}, false
		}
	case apiResponses:
		if _, ok := m["input"]; !ok || r.model == "" {
			return request{}, false
		}
	}
	var stream bool
	_ = json.Unmarshal(m["stream"], &stream)
	r.stream = stream
	r.provider = providerName(a, req.URL.Host)
	return r, true
}

// knownHosts maps the hosts of OpenAI-compatible services to their
// gen_ai.provider.name.
var knownHosts = map[string]string{
	"api.openai.com":                    "openai",
	"api.anthropic.com":                 "anthropic",
	"openrouter.ai":                     "openrouter",
	"api.groq.com":                      "groq",
	"api.mistral.ai":                    "mistral_ai",
	"api.deepseek.com":                  "deepseek",
	"api.together.xyz":                  "together",
	"api.fireworks.ai":                  "fireworks",
	"api.x.ai":                          "xai",
	"generativelanguage.googleapis.com": "gcp.gemini",
}

// providerName names the provider from the API and the host: the OpenAI
// and Anthropic APIs on their own hosts, a known compatible service by its
// host, Ollama by its default port, and "openai-compatible" otherwise.
func providerName(a api, hostport string) string {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(host)
	for h, name := range knownHosts {
		if host == h || strings.HasSuffix(host, "."+h) {
			return name
		}
	}
	if strings.HasSuffix(hostport, ":11434") || strings.Contains(host, "ollama") {
		return "ollama"
	}
	switch a {
	case apiMessages:
		return "anthropic"
	case apiResponses:
		return "openai"
	}
	return "openai-compatible"
}
