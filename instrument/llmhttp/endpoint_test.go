package llmhttp

import "testing"

func TestProviderName(t *testing.T) {
	tests := []struct {
		api  api
		host string
		want string
	}{
		{apiChatCompletions, "api.openai.com", "openai"},
		{apiResponses, "api.openai.com:443", "openai"},
		{apiMessages, "api.anthropic.com", "anthropic"},
		{apiChatCompletions, "openrouter.ai", "openrouter"},
		{apiChatCompletions, "api.groq.com", "groq"},
		{apiChatCompletions, "localhost:11434", "ollama"},
		{apiChatCompletions, "gpu-box:8000", "openai-compatible"},
		{apiMessages, "127.0.0.1:8080", "anthropic"},
	}
	for _, tt := range tests {
		if got := providerName(tt.api, tt.host); got != tt.want {
			t.Errorf("providerName(%d, %q) = %q, want %q", tt.api, tt.host, got, tt.want)
		}
	}
}
