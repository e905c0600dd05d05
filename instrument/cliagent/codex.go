package cliagent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/convtrace/convtrace/instrument"
)

// codexLine is one line of `codex exec --json`.
type codexLine struct {
	Type     string      `json:"type"`
	ThreadID string      `json:"thread_id"`
	Message  string      `json:"message"`
	Item     *codexItem  `json:"item"`
	Usage    *codexUsage `json:"usage"`
	Error    *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// codexUsage is Codex's token usage: input_tokens counts the cached ones.
type codexUsage struct {
	InputTokens           int `json:"input_tokens"`
	CachedInputTokens     int `json:"cached_input_tokens"`
	CacheWriteInputTokens int `json:"cache_write_input_tokens"`
	OutputTokens          int `json:"output_tokens"`
	ReasoningOutputTokens int `json:"reasoning_output_tokens"`
}

func (u codexUsage) usage() instrument.Usage {
	return instrument.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CacheReadTokens: u.CachedInputTokens,
		CacheWriteTokens: u.CacheWriteInputTokens, ReasoningTokens: u.ReasoningOutputTokens}
}

type codexItem struct {
	ID               string          `json:"id"`
	Type             string          `json:"type"`
	Text             string          `json:"text"`
	Command          string          `json:"command"`
	AggregatedOutput string          `json:"aggregated_output"`
	ExitCode         *int            `json:"exit_code"`
	Status           string          `json:"status"`
	Changes          json.RawMessage `json:"changes"`
	Server           string          `json:"server"`
	Tool             string          `json:"tool"`
	Arguments        json.RawMessage `json:"arguments"`
	Result           json.RawMessage `json:"result"`
	Error            *struct {
		Message string `json:"message"`
	} `json:"error"`
	Query   string          `json:"query"`
	Items   json.RawMessage `json:"items"`
	Message string          `json:"message"`
}

// codexParser reads `codex exec --json` lines. It remembers which items
// started, so an item seen only on completion still gets its tool call.
type codexParser struct {
	started map[string]bool

	// Codex's turn.completed usage is the session's total since it
	// began: a run that resumes a session adds to the total base its
	// session file held before it (home is CODEX_HOME).
	resumes bool
	home    string
	base    *instrument.Usage
}

// baseline reads the session's total usage so far from its session file,
// CODEX_HOME/sessions/…/rollout-…-SESSION.jsonl (the last token_count
// event's total_token_usage); base stays nil when there is none.
func (p *codexParser) baseline(session string) {
	if session == "" || p.home == "" {
		return
	}
	var file string
	_ = filepath.WalkDir(filepath.Join(p.home, "sessions"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "rollout-") && strings.HasSuffix(d.Name(), "-"+session+".jsonl") {
			file = path
			return fs.SkipAll
		}
		return nil
	})
	f, err := os.Open(file)
	if file == "" || err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, []byte(`"token_count"`)) {
			continue
		}
		var ev struct {
			Payload struct {
				Type string `json:"type"`
				Info *struct {
					Total *codexUsage `json:"total_token_usage"`
				} `json:"info"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &ev) == nil && ev.Payload.Type == "token_count" && ev.Payload.Info != nil && ev.Payload.Info.Total != nil {
			u := ev.Payload.Info.Total.usage()
			p.base = &u
		}
	}
	if p.base == nil && sc.Err() == nil {
		p.base = &instrument.Usage{} // the session made no request yet
	}
}

// ownUsage is what the session total u adds to the total before the run.
func (p *codexParser) ownUsage(u instrument.Usage) instrument.Usage {
	if p.base == nil {
		return u
	}
	b := *p.base
	return instrument.Usage{InputTokens: max(u.InputTokens-b.InputTokens, 0), OutputTokens: max(u.OutputTokens-b.OutputTokens, 0),
		CacheReadTokens: max(u.CacheReadTokens-b.CacheReadTokens, 0), CacheWriteTokens: max(u.CacheWriteTokens-b.CacheWriteTokens, 0),
		ReasoningTokens: max(u.ReasoningTokens-b.ReasoningTokens, 0)}
}

func newCodexParser() *codexParser { return &codexParser{started: map[string]bool{}} }

// line returns the events of one line.
func (p *codexParser) line(line []byte) []Event {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	var l codexLine
	if err := json.Unmarshal(line, &l); err != nil || l.Type == "" {
		return unknown(line)
	}
	switch l.Type {
	case "thread.started":
		return []Event{{Kind: KindSession, SessionID: l.ThreadID}}
	case "turn.started":
		return nil
	case "turn.completed":
		e := Event{Kind: KindResult}
		if u := l.Usage; u != nil {
			usage := u.usage()
			e.Usage = &usage
		}
		return []Event{e}
	case "turn.failed":
		msg := "turn failed"
		if l.Error != nil && l.Error.Message != "" {
			msg = l.Error.Message
		}
		return []Event{{Kind: KindError, Content: msg}}
	case "error":
		return []Event{{Kind: KindError, Content: l.Message}}
	case "item.started", "item.updated", "item.completed":
		if l.Item == nil {
			return unknown(line)
		}
		return p.item(l.Type, *l.Item)
	}
	return unknown(line)
}

func (p *codexParser) item(phase string, it codexItem) []Event {
	switch it.Type {
	case "agent_message":
		if phase == "item.completed" {
			return []Event{{Kind: KindResponse, Content: it.Text}}
		}
		return nil
	case "reasoning":
		if phase == "item.completed" {
			return []Event{{Kind: KindReasoning, Content: it.Text}}
		}
		return nil
	case "todo_list":
		return []Event{{Kind: KindTodoList, Content: compact(it.Items)}}
	case "error":
		// An error item is Codex going on despite something (model
		// metadata missing, a retry): a warning. A failure ends the
		// turn (turn.failed).
		if phase == "item.completed" {
			return []Event{{Kind: KindWarning, Code: CodeAgentWarning, Content: it.Message}}
		}
		return nil
	}
	name, input, ok := codexTool(it)
	if !ok {
		return nil
	}
	var out []Event
	if !p.started[it.ID] {
		p.started[it.ID] = true
		out = append(out, Event{Kind: KindToolCall, ToolName: name, CallID: it.ID, Content: input})
	}
	if phase != "item.completed" {
		return out
	}
	delete(p.started, it.ID)
	result, failed := codexToolResult(it)
	kind := KindToolResult
	if failed {
		kind = KindToolResultError
	}
	return append(out, Event{Kind: kind, ToolName: name, CallID: it.ID, Content: result})
}

// codexTool names a tool item and renders its input as JSON.
func codexTool(it codexItem) (name, input string, ok bool) {
	var v any
	switch it.Type {
	case "command_execution":
		v = map[string]string{"command": it.Command}
	case "file_change":
		v = map[string]json.RawMessage{"changes": it.Changes}
	case "mcp_tool_call":
		if it.Server != "" {
			name = it.Server + "." + it.Tool
		} else {
			name = it.Tool
		}
		return name, compact(it.Arguments), true
	case "web_search":
		v = map[string]string{"query": it.Query}
	default:
		return "", "", false
	}
	b, _ := json.Marshal(v)
	return it.Type, string(b), true
}

// codexToolResult is a completed tool item's output and whether it failed.
func codexToolResult(it codexItem) (string, bool) {
	failed := it.Status == "failed"
	switch it.Type {
	case "command_execution":
		if it.ExitCode != nil && *it.ExitCode != 0 {
			failed = true
			return fmt.Sprintf("%s\nexit code %d", it.AggregatedOutput, *it.ExitCode), true
		}
		return it.AggregatedOutput, failed
	case "mcp_tool_call":
		if it.Error != nil && it.Error.Message != "" {
			return it.Error.Message, true
		}
		return compact(it.Result), failed
	case "file_change":
		return it.Status, failed
	}
	return it.Status, failed
}

// codexModel is the model a Codex command line asks for: its -m (or
// --model, or -c model=…) flag, else the model of its profile (-p) or the
// top level of config.toml in CODEX_HOME (default ~/.codex), as env sets it.
// Codex's JSON output never names it.
func codexModel(args, env []string) string {
	var profile string
	for i := 1; i < len(args); i++ {
		name, value, inline := strings.Cut(args[i], "=")
		if !inline && i+1 < len(args) {
			value = args[i+1]
		}
		switch name {
		case "-m", "--model":
			return value
		case "-p", "--profile":
			profile = value
		case "-c", "--config":
			if k, v, ok := strings.Cut(value, "="); ok && strings.TrimSpace(k) == "model" {
				return strings.Trim(strings.TrimSpace(v), `"'`)
			}
		}
	}
	home := codexHome(env)
	b, err := os.ReadFile(filepath.Join(home, "config.toml"))
	if home == "" || err != nil {
		return ""
	}
	var cfg struct {
		Model    string `toml:"model"`
		Profile  string `toml:"profile"`
		Profiles map[string]struct {
			Model string `toml:"model"`
		} `toml:"profiles"`
	}
	if toml.Unmarshal(b, &cfg) != nil {
		return ""
	}
	if profile == "" {
		profile = cfg.Profile
	}
	if m := cfg.Profiles[profile].Model; m != "" {
		return m
	}
	return cfg.Model
}

// codexHome is Codex's home folder as env sets it: CODEX_HOME, else
// ~/.codex; "" when neither is known.
func codexHome(env []string) string {
	if home := envValue(env, "CODEX_HOME"); home != "" {
		return home
	}
	if h := envValue(env, "HOME"); h != "" {
		return filepath.Join(h, ".codex")
	}
	return ""
}

// envValue is the value of key in env (os.Environ when env is nil), the
// last one set.
func envValue(env []string, key string) string {
	if env == nil {
		return os.Getenv(key)
	}
	var v string
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}
