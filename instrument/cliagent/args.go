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
	"--session-id": true, "--permission-mode": true, "--append-system-prompt": true,
	"--system-prompt": true, "--max-turns": true, "--settings": true, "--setting-sources": true,
	"--fallback-model": true, "--agents": true, "--agent": true, "--permission-prompt-tool": true,
	"--max-budget-usd": true, "--json-schema": true, "--system-prompt-file": true, "--append-system-prompt-file": true,
	// Codex
	"-m": true, "-c": true, "--config": true, "-s": true, "--sandbox": true, "-C": true, "--cd": true,
	"--profile": true, "-p": true, "-i": true, "--image": true, "-o": true, "--output-last-message": true,
	"--output-schema": true, "--color": true, "-a": true, "--ask-for-approval": true, "--add-dir": true,
	"--enable": true, "--disable": true, "--local-provider": true,
}

// listFlags are Claude Code's flags that take every value up to the next
// flag, so a prompt after them is theirs too (as Claude reads it).
var listFlags = map[string]bool{
	"--allowedTools": true, "--allowed-tools": true, "--disallowedTools": true, "--disallowed-tools": true,
	"--add-dir": true, "--mcp-config": true, "--betas": true, "--tools": true, "--plugin-dir": true, "--file": true,
}

// positionals returns the arguments of an agent's command line that are
// neither flags nor their values, nor Codex's exec and resume subcommands
// and resumed session id; Codex's -p is its profile, Claude's its print
// switch.
func positionals(args []string, f Format) []string {
	var out []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(out, args[i+1:]...)
		case strings.HasPrefix(a, "-") && a != "-":
			if strings.Contains(a, "=") {
				continue
			}
			if f == FormatClaude && listFlags[a] {
				for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
					i++
				}
				continue
			}
			if valueFlags[a] && !(f == FormatClaude && (a == "-p" || a == "-c")) {
				i++
			}
		case f == FormatCodex && (a == "exec" || a == "e") && len(out) == 0:
		case f == FormatCodex && a == "resume" && len(out) == 0:
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && i+2 < len(args) {
				i++ // the session id
			}
		default:
			out = append(out, a)
		}
	}
	return out
}

// promptFromArgs returns the agent's prompt from its arguments: Claude
// Code's one positional argument, Codex's last. For other commands it is
// the arguments themselves.
func promptFromArgs(args []string, f Format) string {
	if len(args) < 2 {
		return ""
	}
	if f != FormatClaude && f != FormatCodex {
		if !isAgent(args[0]) {
			return strings.Join(args[1:], " ")
		}
		f = agentFormat(args[0])
	}
	pos := positionals(args, f)
	if len(pos) == 0 {
		return ""
	}
	prompt := pos[len(pos)-1]
	if f == FormatClaude {
		prompt = pos[0]
	}
	if prompt == "-" {
		return ""
	}
	return prompt
}

func isAgent(path string) bool {
	return agentFormat(path) != FormatAuto
}

// agentFormat is the format of the agent a command names, FormatAuto for
// any other command.
func agentFormat(path string) Format {
	name := filepath.Base(path)
	switch {
	case strings.Contains(name, "claude"):
		return FormatClaude
	case strings.Contains(name, "codex"):
		return FormatCodex
	}
	return FormatAuto
}
