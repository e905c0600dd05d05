package agentcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func CodexConfig(o RunOptions) string {
	proto := "json"
	if o.Protocol == ProtoProtobuf {
		proto = "binary"
	}
	model := o.Model
	if model == "" {
		model = "gpt-5.5"
	}
	ep := strings.TrimSuffix(o.OTLPEndpoint, "/")
	logPrompt := "true"
	if o.NoContent {
		logPrompt = "false"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "model = %q\n", model)
	b.WriteString(`model_provider = "agentcheck"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[analytics]
enabled = false

[feedback]
enabled = false

# Plugin and app sync reach github.com and chatgpt.com: keep them off.
[features]
plugins = false
remote_plugin = false
apps = false

[model_providers.agentcheck]
name = "agentcheck fake provider"
`)
	fmt.Fprintf(&b, "base_url = %q\n", strings.TrimSuffix(o.ProviderURL, "/")+"/v1")
	b.WriteString(`wire_api = "responses"
env_key = "AGENTCHECK_OPENAI_KEY"
request_max_retries = 0
stream_max_retries = 0
supports_websockets = false

[otel]
environment = "agentcheck"
`)
	fmt.Fprintf(&b, "log_user_prompt = %s\n", logPrompt)
	fmt.Fprintf(&b, "log_agent_responses = %s\n", logPrompt)
	if o.CodexOtelExtra != "" {
		b.WriteString(strings.TrimSpace(o.CodexOtelExtra) + "\n")
	}
	fmt.Fprintf(&b, "exporter = { otlp-http = { endpoint = %q, protocol = %q } }\n", ep+"/v1/logs", proto)
	fmt.Fprintf(&b, "trace_exporter = { otlp-http = { endpoint = %q, protocol = %q } }\n", ep+"/v1/traces", proto)
	fmt.Fprintf(&b, "metrics_exporter = { otlp-http = { endpoint = %q, protocol = %q } }\n", ep+"/v1/metrics", proto)
	return b.String()
}

// CodexEnv returns the variables RunCodex sets (without the base
// environment).
func CodexEnv(o RunOptions) []string {
	return []string{
		"CODEX_HOME=" + filepath.Join(o.Home, ".codex"),
		"AGENTCHECK_OPENAI_KEY=sk-agentcheck-fake",
		"RUST_LOG=warn",
	}
}

// RunCodex runs `codex exec --json PROMPT` once against the fake provider
// with telemetry sent to o.OTLPEndpoint, writing CODEX_HOME/config.toml.
func RunCodex(ctx context.Context, o RunOptions) (*RunResult, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	codexHome := filepath.Join(o.Home, ".codex")
	if err := os.MkdirAll(codexHome, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(CodexConfig(o)), 0o644); err != nil {
		return nil, err
	}
	args := []string{"exec"}
	if o.ResumeSessionID != "" {
		args = append(args, "resume")
	}
	args = append(args,
		"--json",
		"--skip-git-repo-check",
		"--dangerously-bypass-approvals-and-sandbox",
		"-C", o.WorkDir,
	)
	args = append(args, o.ExtraArgs...)
	if o.ResumeSessionID != "" {
		args = append(args, o.ResumeSessionID)
	}
	args = append(args, o.Prompt)
	env := append(CodexEnv(o), proxyEnv(o.ProxyURL)...)
	env = append(env, o.ExtraEnv...)
	res, err := runCLI(ctx, filepath.Join(o.BinDir, "codex"), args, o, env)
	if res != nil {
		res.SessionID, res.FinalText = parseCodexJSONL(res.Stdout)
	}
	return res, err
}

// parseCodexJSONL reads `codex exec --json` output for the thread id and
// the last agent message.
func parseCodexJSONL(b []byte) (threadID, final string) {
	for _, line := range bytes.Split(b, []byte("\n")) {
		var ev struct {
			Type     string `json:"type"`
			ThreadID string `json:"thread_id"`
			Item     struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"item"`
		}
		if json.Unmarshal(line, &ev) != nil {
			continue
		}
		if ev.ThreadID != "" {
			threadID = ev.ThreadID
		}
		if ev.Type == "item.completed" && ev.Item.Type == "agent_message" {
			final = ev.Item.Text
		}
	}
	return threadID, final
}
