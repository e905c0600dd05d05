package agentcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"time"
)

// Pinned CLI versions; package.json in this folder pins the same ones.
const (
	ClaudeCodeVersion = "2.1.328"
	CodexVersion      = "0.169.0"
)

// Protocol is the OTLP/HTTP body encoding a CLI is told to use.
type Protocol string

// The OTLP/HTTP encodings.
const (
	ProtoJSON     Protocol = "json"
	ProtoProtobuf Protocol = "protobuf"
)

// RunOptions configures one CLI run.
type RunOptions struct {
	// BinDir holds the claude and codex executables; default
	// DefaultBinDir().
	BinDir string
	// ProviderURL is the fake provider's base URL (no /v1).
	ProviderURL string
	// OTLPEndpoint is the OTLP/HTTP base URL (no /v1/<signal>).
	OTLPEndpoint string
	// Protocol defaults to ProtoJSON.
	Protocol Protocol
	// Prompt is the user's prompt.
	Prompt string
	// Home is the HOME (and config dir parent) to use; it is created if
	// missing. Reuse it to resume a session. Required.
	Home string
	// WorkDir is the working directory; default Home/work.
	WorkDir string
	// Timeout bounds the run; default 2 minutes.
	Timeout time.Duration
	// ResumeSessionID resumes an earlier session (Claude Code --resume;
	// Codex "exec resume").
	ResumeSessionID string
	// Model overrides the model name sent to the provider.
	Model string
	// NoContent leaves the content-logging switches off.
	NoContent bool
	// ProxyURL, when set, is given as HTTP(S)_PROXY so that any traffic
	// not to loopback goes there (see NewBlackholeProxy).
	ProxyURL string
	// CodexOtelExtra is appended to Codex's [otel] table, one TOML
	// key = value a line (e.g. "log_sse_deltas = true").
	CodexOtelExtra string
	// ExtraEnv is appended to the environment last.
	ExtraEnv []string
	// StreamJSON runs Claude Code with --output-format stream-json
	// --verbose (default json).
	StreamJSON bool
	// ExtraArgs are added to the CLI's arguments, before the prompt for
	// Codex and after every other for Claude Code; LeadArgs go first (of
	// Claude Code's).
	ExtraArgs, LeadArgs []string
	// Wrap is a command that runs the CLI: the CLI and its arguments
	// follow it (such as convtrace run ... --).
	Wrap []string
}

// RunResult is what a CLI run produced.
type RunResult struct {
	Args      []string
	Env       []string // the variables set on top of the minimal base
	Stdout    []byte
	Stderr    []byte
	ExitCode  int
	Duration  time.Duration
	SessionID string
	// FinalText is the assistant's last answer as the CLI printed it.
	FinalText string
}

// DefaultBinDir is node_modules/.bin next to this source file.
func DefaultBinDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return filepath.Join("node_modules", ".bin")
	}
	return filepath.Join(filepath.Dir(file), "node_modules", ".bin")
}

// baseEnv is the minimal environment every run gets: PATH from the
// caller, nothing else inherited, so no real API key or OTEL setting
// leaks in.
func baseEnv(home string) []string {
	path := os.Getenv("PATH")
	if path == "" {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	return []string{
		"PATH=" + path,
		"HOME=" + home,
		"USER=agentcheck",
		"LANG=C.UTF-8",
		"TERM=dumb",
		"NO_COLOR=1",
		"TMPDIR=" + filepath.Join(home, "tmp"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
	}
}

func proxyEnv(proxy string) []string {
	if proxy == "" {
		return nil
	}
	noProxy := "127.0.0.1,localhost,::1"
	return []string{
		"HTTP_PROXY=" + proxy, "HTTPS_PROXY=" + proxy, "ALL_PROXY=" + proxy,
		"http_proxy=" + proxy, "https_proxy=" + proxy, "all_proxy=" + proxy,
		"NO_PROXY=" + noProxy, "no_proxy=" + noProxy,
	}
}

func (o *RunOptions) defaults() error {
	if o.Home == "" {
		return errors.New("agentcheck: RunOptions.Home is required")
	}
	if o.BinDir == "" {
		o.BinDir = DefaultBinDir()
	}
	if o.Protocol == "" {
		o.Protocol = ProtoJSON
	}
	if o.WorkDir == "" {
		o.WorkDir = filepath.Join(o.Home, "work")
	}
	if o.Timeout == 0 {
		o.Timeout = 2 * time.Minute
	}
	for _, d := range []string{o.Home, o.WorkDir, filepath.Join(o.Home, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// ClaudeEnv returns the variables RunClaude sets for telemetry, the
// provider and network quietness (without the base environment).
func ClaudeEnv(o RunOptions) []string {
	proto := "http/json"
	if o.Protocol == ProtoProtobuf {
		proto = "http/protobuf"
	}
	env := []string{
		"CLAUDE_CONFIG_DIR=" + filepath.Join(o.Home, ".claude"),
		"ANTHROPIC_BASE_URL=" + o.ProviderURL,
		"ANTHROPIC_API_KEY=sk-ant-agentcheck-fake",
		// Telemetry: all three signals over OTLP/HTTP.
		"CLAUDE_CODE_ENABLE_TELEMETRY=1",
		"CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1", // turns on traces
		"OTEL_LOGS_EXPORTER=otlp",
		"OTEL_METRICS_EXPORTER=otlp",
		"OTEL_TRACES_EXPORTER=otlp",
		"OTEL_EXPORTER_OTLP_PROTOCOL=" + proto,
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + o.OTLPEndpoint,
		"OTEL_METRIC_EXPORT_INTERVAL=1000",
		"OTEL_LOGS_EXPORT_INTERVAL=500",
		"OTEL_TRACES_EXPORT_INTERVAL=500",
		// Network quietness: no auto-update, error reports, first-party
		// event logging or feature-flag fetches.
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_TELEMETRY=1",
		"CLAUDE_CODE_DISABLE_TERMINAL_TITLE=1",
		"IS_SANDBOX=1",
	}
	if !o.NoContent {
		env = append(env,
			"OTEL_LOG_USER_PROMPTS=1",
			"OTEL_LOG_TOOL_DETAILS=1",
			"OTEL_LOG_TOOL_CONTENT=1",
			"OTEL_LOG_ASSISTANT_RESPONSES=1",
			"OTEL_LOG_RAW_API_BODIES=1",
		)
	}
	return env
}

// RunClaude runs `claude -p PROMPT` once against the fake provider with
// telemetry sent to o.OTLPEndpoint. The Bash tool is allowed without
// asking.
func RunClaude(ctx context.Context, o RunOptions) (*RunResult, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	format := []string{"--output-format", "json"}
	if o.StreamJSON {
		format = []string{"--output-format", "stream-json", "--verbose"}
	}
	args := append(append(append([]string(nil), o.LeadArgs...), "-p", o.Prompt), format...)
	args = append(args, "--allowedTools", "Bash", "--permission-mode", "default")
	if o.Model != "" {
		args = append(args, "--model", o.Model)
	}
	if o.ResumeSessionID != "" {
		args = append(args, "--resume", o.ResumeSessionID)
	}
	args = append(args, o.ExtraArgs...)
	env := append(ClaudeEnv(o), proxyEnv(o.ProxyURL)...)
	env = append(env, o.ExtraEnv...)
	res, err := runCLI(ctx, filepath.Join(o.BinDir, "claude"), args, o, env)
	if res != nil {
		var out struct {
			SessionID string `json:"session_id"`
			Result    string `json:"result"`
		}
		if json.Unmarshal(lastJSONLine(res.Stdout), &out) == nil { // the result line of either format
			res.SessionID, res.FinalText = out.SessionID, out.Result
		}
	}
	return res, err
}

func lastJSONLine(b []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		if l := bytes.TrimSpace(lines[i]); len(l) > 0 && l[0] == '{' {
			return l
		}
	}
	return nil
}

// CodexConfig returns the config.toml RunCodex writes into CODEX_HOME.
func runCLI(ctx context.Context, bin string, args []string, o RunOptions, env []string) (*RunResult, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("agentcheck: %s not installed (run npm ci in internal/agentcheck): %w", filepath.Base(bin), err)
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	argv := append(append(append([]string(nil), o.Wrap...), bin), args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = o.WorkDir
	cmd.Env = append(baseEnv(o.Home), env...)
	cmd.Stdin = bytes.NewReader(nil)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	res := &RunResult{
		Args: append(append(append([]string(nil), o.Wrap...), filepath.Base(bin)), args...), Env: env,
		Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Duration: time.Since(start),
	}
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("agentcheck: %s timed out after %s", filepath.Base(bin), o.Timeout)
	}
	if err != nil {
		return res, fmt.Errorf("agentcheck: %s: %w; stderr: %s", filepath.Base(bin), err, tail(stderr.Bytes(), 2000))
	}
	return res, nil
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// SortedEnv returns env sorted, for reports.
func SortedEnv(env []string) []string {
	out := append([]string(nil), env...)
	sort.Strings(out)
	return out
}
