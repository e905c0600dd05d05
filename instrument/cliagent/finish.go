package cliagent

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/convtrace/convtrace/instrument"
)

// Errors of tool spans: the result the agent marked as an error (the
// result itself is recorded as the tool's output), and no result at all.
var (
	errToolFailed = errors.New("the tool reported an error")
	errNoResult   = errors.New("no tool result: the agent ended first")
)

// finish ends the run: it closes tools left without a result, records the
// warnings and returns the run's response, or its error.
func (r *run) finish(runErr error, state *os.ProcessState, stderr string) (instrument.Response, error) {
	rest := r.line
	r.line = nil
	if r.format == FormatAuto && len(bytes.TrimSpace(rest)) > 0 {
		r.format = sniff(rest)
	}
	if r.format == FormatPlain {
		r.stdout.Write(rest)
	} else if len(bytes.TrimSpace(rest)) > 0 {
		r.parse(rest)
	}
	r.endCalls("")
	for id, t := range r.tools {
		t.tool.End("", errNoResult)
		delete(r.tools, id)
	}

	failed := runErr != nil || (r.result != nil && r.result.IsError)
	if !failed {
		for _, msg := range r.errs {
			r.addTurn(Event{Kind: KindWarning, Code: CodeAgentWarning, Content: msg}, time.Now())
		}
	}
	if failed && resumeInvalid(r.format, stderr+"\n"+strings.Join(r.errs, "\n")+"\n"+resultText(r.result)) {
		r.resumeFailed = true
		r.flushResponse()
		r.addTurn(Event{Kind: KindWarning, Code: CodeSessionResumeInvalid, Rejected: r.resumed, Content: lastLine(stderr, r.errs, r.result)}, time.Now())
	} else if failed && r.resumed != "" && r.session == "" {
		// A resumed run that failed before the agent named a session, in
		// words no matcher knows: counted, so a new message gets noticed.
		r.flushResponse()
		r.addTurn(Event{Kind: KindWarning, Code: CodeResumeFailedUnrecognised,
			Content: "the resumed run failed before the agent named a session, and no known message says why: " + lastLine(stderr, r.errs, r.result)}, time.Now())
	}
	resp := instrument.Response{Model: r.model, SessionID: r.session}
	if failed && r.response != nil && (slices.Contains(r.errs, r.response.text) || r.response.text == resultText(r.result)) {
		r.response = nil // the failure's own text, not an answer
	}
	switch {
	case r.format == FormatPlain || r.format == FormatAuto:
		resp.Content = r.stdout.String()
	case r.result != nil && r.result.Content != "":
		resp.Content = r.result.Content
	case r.response != nil:
		resp.Content = r.response.text
	}
	if r.response != nil && (failed || r.response.text != resp.Content) {
		r.flushResponse()
	}
	if r.ncalls > 0 {
		r.callsTotal(&resp, failed)
	} else if res := r.result; res != nil {
		resp.Usage, resp.CostUSD = res.Usage, res.CostUSD
	}
	if res := r.result; res != nil {
		if res.DurationMS > 0 {
			r.call.Span().SetAttributes(attribute.Int64("convtrace.agent.duration_ms", res.DurationMS))
		}
	}
	if !failed {
		return resp, nil
	}
	msg := "agent reported an error" // it exited 0 with an error result
	switch {
	case runErr != nil && state != nil:
		msg = state.String() // "exit status 3", "signal: killed"
	case runErr != nil:
		msg = runErr.Error()
	}
	// What the agent said went wrong comes first; stderr (which may hold
	// no more than a shell's warnings) when it said nothing.
	detail := strings.TrimSpace(strings.Join(r.errs, "\n"))
	if detail == "" && r.result != nil && r.result.IsError {
		detail = strings.TrimSpace(r.result.Content)
	}
	if detail == "" {
		detail = strings.TrimSpace(stderr)
	}
	if detail != "" {
		msg += ": " + detail
	}
	return resp, errors.New(msg)
}

func resultText(e *Event) string {
	if e == nil {
		return ""
	}
	return e.Content
}

func lastLine(stderr string, errs []string, res *Event) string {
	for _, s := range append([]string{stderr, resultText(res)}, errs...) {
		if s = strings.TrimSpace(s); s != "" {
			lines := strings.Split(s, "\n")
			return lines[len(lines)-1]
		}
	}
	return ""
}
