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
// Code (claude --resume ID …) and Codex (codex exec FLAGS… resume ID …) take it;
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
			// codex exec [FLAGS] resume ID [PROMPT]: exec's flags go
			// before resume, which takes only its own.
			pos := positionals(args, FormatCodex)
			flags := slices.DeleteFunc(slices.Clone(args[i+1:]), func(a string) bool { return slices.Contains(pos, a) })
			if len(flags)+len(pos) != len(args)-i-1 {
				return args, false // a positional repeated as a flag value: keep the line as it is
			}
			return slices.Concat(args[:i+1], flags, []string{"resume", session}, pos), true
		}
	}
	return args, false
}

// ResumedSession returns the session id the command line args resume
// (claude --resume ID or -r ID, codex exec … resume ID), "" when they
// resume none or only the last one (--continue, --last).
func ResumedSession(args []string) string { return resumedSession(agentFormat(firstArg(args)), args) }

// resumedSession is ResumedSession for the agent of format f.
func resumedSession(f Format, args []string) string {
	switch f {
	case FormatClaude:
		for i, a := range args[1:] {
			if k, v, ok := strings.Cut(a, "="); ok && (k == "--resume" || k == "-r") {
				return v
			}
			if (a == "--resume" || a == "-r") && i+2 < len(args) && !strings.HasPrefix(args[i+2], "-") {
				return args[i+2]
			}
		}
	case FormatCodex:
		if i := slices.Index(args, "resume"); i > 0 && slices.Contains(args[:i], "exec") && i+2 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			return args[i+1] // resume ID PROMPT; resume PROMPT alone is --last's
		}
	}
	return ""
}

// codexResumes reports whether a Codex command line resumes a session:
// codex exec [FLAGS] resume ….
func codexResumes(args []string) bool {
	i := slices.Index(args, "exec")
	for j := i + 1; i > 0 && j < len(args); j++ {
		if args[j] == "resume" && !valueFlags[args[j-1]] {
			return len(positionals(args[:j], FormatCodex)) == 0
		}
	}
	return false
}

// KnownSession returns the session id a command line names before the
// agent runs: the one Claude Code is told to start (--session-id) or the
// one it or Codex resumes (a fork gets a new one); "" when it names none.
func KnownSession(args []string) string {
	var named, fork bool
	var id string
	for i, a := range args {
		k, v, inline := strings.Cut(a, "=")
		switch k {
		case "--session-id":
			named = true
			if !inline && i+1 < len(args) {
				v = args[i+1]
			}
			id = v
		case "--fork-session":
			fork = true
		}
	}
	switch {
	case named && agentFormat(firstArg(args)) == FormatClaude:
		return id
	case fork:
		return ""
	}
	return ResumedSession(args)
}

// NewSessionArgs returns a Claude Code command line that starts a new
// session with id (--session-id); false for any other command, or one that
// resumes, continues or names its session already.
func NewSessionArgs(args []string, id string) ([]string, bool) {
	if agentFormat(firstArg(args)) != FormatClaude || slices.ContainsFunc(args[1:], func(a string) bool {
		k, _, _ := strings.Cut(a, "=")
		return k == "--resume" || k == "-r" || k == "--continue" || k == "-c" || k == "--session-id" || k == "--fork-session"
	}) {
		return args, false
	}
	return slices.Concat(args[:1], []string{"--session-id", id}, args[1:]), true
}

func firstArg(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
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
		needles = []string{"No active session", "thread not found", "no rollout found"}
	default:
		needles = []string{"Invalid session id", "Could not resume", "session not found", "No conversation found", "No active session", "thread not found", "no rollout found"}
	}
	low := strings.ToLower(text)
	for _, n := range needles {
		if strings.Contains(low, strings.ToLower(n)) {
			return true
		}
	}
	return false
}
