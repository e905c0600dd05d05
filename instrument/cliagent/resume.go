package cliagent

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
)

// ErrSessionResumeInvalid is returned by Command, beside the agent's own
// error, when the agent said the session it was told to resume does not
// exist (the run then holds a warning turn with CodeSessionResumeInvalid):
// running it again without resuming may succeed.
var ErrSessionResumeInvalid = errors.New("the agent could not resume the session")

// ResumeArgs returns the command line args with session resumed, as Claude
// Code (claude --resume ID …) and Codex (codex exec resume ID …) take it;
// false for any other command, or a command line that already resumes.
func ResumeArgs(args []string, session string) ([]string, bool) {
	if len(args) < 2 || session == "" || slices.ContainsFunc(args, func(a string) bool {
		return a == "--resume" || a == "-r" || a == "resume" || a == "--continue" || a == "-c" && filepath.Base(args[0]) == "claude"
	}) {
		return args, false
	}
	switch filepath.Base(args[0]) {
	case "claude":
		return slices.Concat(args[:1], []string{"--resume", session}, args[1:]), true
	case "codex":
		if i := slices.Index(args, "exec"); i > 0 {
			return slices.Concat(args[:i+1], []string{"resume", session}, args[i+1:]), true
		}
	}
	return args, false
}

// ResumeProvider is the provider whose sessions the command line args
// resume: anthropic for Claude Code, openai for Codex, "" for others.
func ResumeProvider(args []string) string {
	if len(args) == 0 {
		return ""
	}
	switch filepath.Base(args[0]) {
	case "claude":
		return provider(FormatClaude)
	case "codex":
		return provider(FormatCodex)
	}
	return ""
}

// resumeInvalid reports whether text says the session to resume does not
// exist.
func resumeInvalid(f Format, text string) bool {
	var needles []string
	switch f {
	case FormatClaude:
		needles = []string{"Invalid session id", "Could not resume", "session not found", "No conversation found"}
	case FormatCodex:
		needles = []string{"No active session", "thread not found"}
	default:
		needles = []string{"Invalid session id", "Could not resume", "session not found", "No conversation found", "No active session", "thread not found"}
	}
	low := strings.ToLower(text)
	for _, n := range needles {
		if strings.Contains(low, strings.ToLower(n)) {
			return true
		}
	}
	return false
}
