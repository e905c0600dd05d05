package cliagent

import (
	"path/filepath"
	"strings"
)

// formatFromArgs knows the agents by their output flags; anything else is
// decided by its first line.
func formatFromArgs(args []string) Format {
	if len(args) == 0 {
		return FormatAuto
	}
	var exec, jsonFlag, streamJSON bool
	for i, a := range args[1:] {
		switch {
		case a == "exec":
			exec = true
		case a == "--json" || a == "--experimental-json":
			jsonFlag = true
		case a == "--output-format=stream-json",
			a == "--output-format" && i+2 < len(args) && args[i+2] == "stream-json":
			streamJSON = true
		}
	}
	switch {
	case streamJSON:
		return FormatClaude
	case exec && jsonFlag:
		return FormatCodex
	}
	return FormatAuto
}

func provider(f Format) string {
	switch f {
	case FormatClaude:
		return "anthropic"
	case FormatCodex:
		return "openai"
	}
	return ""
}

// valueFlags are the agents' flags that take a value, so that value is not
// mistaken for the prompt.
var valueFlags = map[string]bool{
	// Claude Code
	"--output-format": true, "--input-format": true, "--model": true, "--resume": true, "-r": true,
	"--session-id": true, "--allowedTools": true, "--allowed-tools": true, "--disallowedTools": true,
	"--disallowed-tools": true, "--permission-mode": true, "--append-system-prompt": true,
	"--system-prompt": true, "--max-turns": true, "--mcp-config": true, "--settings": true,
	"--add-dir": true, "--fallback-model": true, "--agents": true, "--permission-prompt-tool": true,
	// Codex
	"-m": true, "-c": true, "--config": true, "-s": true, "--sandbox": true, "-C": true, "--cd": true,
	"--profile": true, "-i": true, "--image": true, "-o": true, "--output-last-message": true,
	"--output-schema": true, "--color": true, "-a": true, "--ask-for-approval": true,
}

// promptFromArgs returns the agent's prompt from its arguments: the last
// argument that is neither a flag, a flag's value nor a subcommand. For
// other commands it is the arguments themselves.
func promptFromArgs(args []string, f Format) string {
	if len(args) < 2 {
		return ""
	}
	if f != FormatClaude && f != FormatCodex && !isAgent(args[0]) {
		return strings.Join(args[1:], " ")
	}
	var last string
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if i+1 < len(args) {
				last = args[len(args)-1]
			}
			i = len(args)
		case strings.HasPrefix(a, "-") && a != "-":
			if valueFlags[a] && !strings.Contains(a, "=") {
				i++
			}
		case a == "exec" || a == "resume":
			if a == "resume" && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && i+2 < len(args) {
				i++ // the session id
			}
		default:
			last = a
		}
	}
	if last == "-" {
		return ""
	}
	return last
}

func isAgent(path string) bool {
	name := filepath.Base(path)
	return strings.Contains(name, "claude") || strings.Contains(name, "codex")
}
