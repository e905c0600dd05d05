package frameworks

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Source is one third-party instrumentation driven through the scenario.
type Source struct {
	// Name is the folder of its script under js/ and the suffix of its
	// thread id ("fw-" + Name).
	Name string
	// Provider is the provider the calls go to: "openai" or "anthropic".
	Provider string
	// Model is the model the script asks for.
	Model string
	// Packages names the npm packages it drives, for reports.
	Packages string
}

// ThreadID is the session or conversation id the source's script sets.
func (s Source) ThreadID() string { return "fw-" + s.Name }

// Sources lists every source, in the order of the brief that asked for them.
var Sources = []Source{
	{Name: "langchain", Provider: "openai", Model: OpenAIModel, Packages: "@langchain/openai, @langchain/core, @arizeai/openinference-instrumentation-langchain"},
	{Name: "openlit", Provider: "openai", Model: OpenAIModel, Packages: "openlit, openai"},
	{Name: "mastra", Provider: "openai", Model: OpenAIModel, Packages: "@mastra/core, @mastra/otel-exporter, @ai-sdk/openai"},
	{Name: "openai-agents", Provider: "openai", Model: OpenAIModel, Packages: "@openai/agents, @arizeai/openinference-instrumentation-openai-agents"},
	{Name: "logfire", Provider: "openai", Model: OpenAIModel, Packages: "@pydantic/logfire-node, openai"},
	{Name: "anthropic", Provider: "anthropic", Model: AnthropicModel, Packages: "@anthropic-ai/sdk, @traceloop/node-server-sdk"},
	{Name: "otel-openai", Provider: "openai", Model: OpenAIModel, Packages: "@opentelemetry/instrumentation-openai, openai"},
	{Name: "traceloop-openai", Provider: "openai", Model: OpenAIModel, Packages: "@traceloop/node-server-sdk (@traceloop/instrumentation-openai), openai"},
	{Name: "openinference-openai", Provider: "openai", Model: OpenAIModel, Packages: "@arizeai/openinference-instrumentation-openai, openai"},
	{Name: "vercel-ai", Provider: "openai", Model: OpenAIModel, Packages: "ai, @ai-sdk/openai"},
}

// SourceByName returns the source called name.
func SourceByName(name string) (Source, bool) {
	for _, s := range Sources {
		if s.Name == name {
			return s, true
		}
	}
	return Source{}, false
}

// Dir is this package's folder, where package.json and js/ are.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Installed reports whether `npm ci` has been run in Dir.
func Installed() bool {
	_, err := os.Stat(filepath.Join(Dir(), "node_modules", "@opentelemetry", "api"))
	return err == nil
}

// Script is the path of a source's script.
func (s Source) Script() (string, error) {
	for _, name := range []string{"index.cjs", "index.mjs"} {
		p := filepath.Join(Dir(), "js", s.Name, name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("source %s: no js/%s/index.cjs or index.mjs", s.Name, s.Name)
}

// Env is the environment a source's script runs with: the fake provider's
// and the OTLP receiver's URLs, fake keys, and every vendor telemetry ping
// switched off. Proxy settings are dropped: everything is on loopback.
func Env(providerURL, otlpURL string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "OTEL_"), strings.HasPrefix(k, "OPENAI_"), strings.HasPrefix(k, "ANTHROPIC_"),
			strings.HasPrefix(k, "TRACELOOP_"), strings.HasPrefix(k, "LOGFIRE_"), strings.HasPrefix(k, "OPENLIT_"),
			strings.HasPrefix(k, "MASTRA_"), strings.HasPrefix(k, "NODE_OPTIONS"),
			strings.EqualFold(k, "HTTP_PROXY"), strings.EqualFold(k, "HTTPS_PROXY"), strings.EqualFold(k, "ALL_PROXY"), strings.EqualFold(k, "NO_PROXY"):
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"OPENAI_BASE_URL="+providerURL+"/v1",
		"OPENAI_API_KEY=sk-fake",
		"ANTHROPIC_BASE_URL="+providerURL,
		"ANTHROPIC_API_KEY=sk-ant-fake",
		"OTEL_EXPORTER_OTLP_ENDPOINT="+otlpURL,
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true",
		"TRACELOOP_TELEMETRY=false",
		"MASTRA_TELEMETRY_DISABLED=1",
		"DO_NOT_TRACK=1",
		"NO_PROXY=*",
	)
}

// RunSource runs a source's script with node until it exits or ctx ends,
// and returns what it printed.
func RunSource(ctx context.Context, s Source, providerURL, otlpURL string) ([]byte, error) {
	script, err := s.Script()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "node", "--require", filepath.Join(Dir(), "js", "guard.cjs"), script)
	cmd.Dir = filepath.Dir(script)
	cmd.Env = Env(providerURL, otlpURL)
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return out.Bytes(), fmt.Errorf("node %s: %w", filepath.Base(filepath.Dir(script)), err)
	}
	return out.Bytes(), nil
}
