package demo

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// scene is who asks the provider, read from the system message the
// pipeline writes: "You are {speaker}, ...", "Phase: {phase}." and, in a
// revision round, "Round: {n}.".
type scene struct {
	speaker, phase string
	round          int
}

var (
	speakerRe = regexp.MustCompile(`\bYou are ([A-Za-z0-9._-]+)`)
	phaseRe   = regexp.MustCompile(`\bPhase: ([a-z]+)`)
	roundRe   = regexp.MustCompile(`\bRound: ([0-9]+)`)
)

func sceneOf(msgs []Message) scene {
	var sc scene
	for _, m := range msgs {
		if m.Role != "system" && m.Role != "developer" {
			continue
		}
		if s := speakerRe.FindStringSubmatch(m.Content); s != nil {
			sc.speaker = strings.TrimRight(s[1], ".,")
		}
		if s := phaseRe.FindStringSubmatch(m.Content); s != nil {
			sc.phase = s[1]
		}
		if s := roundRe.FindStringSubmatch(m.Content); s != nil {
			sc.round, _ = strconv.Atoi(s[1])
		}
		break
	}
	return sc
}

// reply is the scripted answer to req: the demo fixes a TypeError in a
// TypeScript project's parseConfig, which throws when the config file is
// empty.
func (sc scene) reply(req ChatRequest) Message {
	text := func(s string) Message { return Message{Role: "assistant", Content: s} }
	switch sc.speaker {
	case "claude-planner":
		if sc.phase == "revision" {
			return text(planARevised)
		}
		return text(planA)
	case "codex-planner":
		return text(planB)
	case "claude-critic":
		return text(critiqueOfB)
	case "codex-critic":
		return text(critiqueOfA)
	case "adjudicator":
		return text(adjudication)
	case "reviewer":
		if sc.round > 0 {
			return text(reviewApproved)
		}
		return text(reviewChanges)
	case "codex-executor":
		return executorReply(req)
	case "claude-verifier":
		return text(verification)
	}
	return text(fmt.Sprintf("This is the convtrace demo provider. It has no script for %q; start the system message with \"You are <speaker>\" to pick one.", sc.speaker))
}

// executorReply reads the conversation so far: first the executor looks at
// the code and runs the failing test, then it patches and re-runs the
// tests, then it reports. It only calls tools the request offers.
func executorReply(req ChatRequest) Message {
	offered := map[string]bool{}
	for _, t := range req.Tools {
		offered[t.Function.Name] = true
	}
	called := map[string]bool{}
	for _, m := range req.Messages {
		for _, tc := range m.ToolCalls {
			called[tc.Function.Name] = true
		}
	}
	var calls [][2]string // name, arguments
	switch {
	case !called["read_file"] && offered["read_file"] && offered["run_tests"]:
		calls = [][2]string{
			{"read_file", `{"path":"src/config.ts"}`},
			{"run_tests", `{"path":"test/config.test.ts"}`},
		}
	case !called["apply_patch"] && offered["apply_patch"] && offered["run_tests"]:
		patch, _ := json.Marshal(map[string]string{"patch": configPatch})
		calls = [][2]string{
			{"apply_patch", string(patch)},
			{"run_tests", `{"path":"test/config.test.ts"}`},
		}
	default:
		return Message{Role: "assistant", Content: executorReport}
	}
	msg := Message{Role: "assistant"}
	for i, c := range calls {
		msg.ToolCalls = append(msg.ToolCalls, ToolCall{
			ID:       "call_" + digest(req.User, req.Messages, i)[:24],
			Type:     "function",
			Function: FunctionCall{Name: c[0], Arguments: c[1]},
		})
	}
	return msg
}

const planA = `Plan A — fix the TypeError in parseConfig on an empty config file

1. Reproduce: ` + "`npm test -- test/config.test.ts`" + `; the case "returns defaults when the config file is empty" fails with TypeError: Cannot read properties of undefined (reading 'settings') at src/config.ts:14.
2. Root cause: js-yaml's load("") returns undefined for an empty document, and parseConfig reads doc.settings unconditionally.
3. Fix: treat an empty document as {} (` + "`load(raw) ?? {}`" + `) so DEFAULTS apply.
4. Keep the behaviour of valid files and the Config type unchanged.
5. Verify: the config tests and ` + "`npm run typecheck`" + `.

Risk: low — one function, covered by tests.`

const planB = `Plan B — make config loading tolerant of empty input

1. Add readConfigSource(path) returning "" for a missing or empty file.
2. Replace js-yaml's load with loadAll and take the first document, defaulting to {}.
3. Validate the parsed value with zod (ConfigSchema.parse), which fills in defaults.
4. Update the call sites in src/cli.ts and src/daemon.ts to the new signature.
5. Run the full test suite.`

const critiqueOfB = `Critique of plan B (codex-planner)

- Scope creep: adding zod and changing parseConfig's signature touches src/cli.ts and src/daemon.ts for a one-line bug.
- loadAll changes the meaning of multi-document files: today a second document is an error, plan B would silently ignore it.
- Step 1 treats a missing file like an empty one, which hides a real misconfiguration.
+ Validating the parsed value is the right long-term direction.

Verdict: fixes the crash, but too broad for this issue.`

const critiqueOfA = `Critique of plan A (claude-planner)

- ` + "`load(raw) ?? {}`" + ` covers "" and a comment-only file, but not a scalar document such as ` + "`true`" + ` or ` + "`42`" + `: doc.settings is then undefined and the defaults silently win. It needs an explicit mapping check.
- No regression test is listed for the comment-only case.
+ Minimal, keeps the public signature, easy to review.

Verdict: sound once the mapping check is added.`

const adjudication = `Decision: plan A (claude-planner).

Both plans fix the crash. Plan A is the minimal change and keeps parseConfig's signature; plan B's zod migration and new signature belong in their own issue, as the critique of plan B argues. The critique of plan A stands: a document that is not a mapping must raise ConfigError. The reviewer should hold the plan to that.`

const reviewChanges = `Review of plan A: changes requested

1. [major] A document that is not a mapping (true, 42, "- a") must raise ConfigError instead of falling through to the defaults; the critique's finding is not in the plan yet.
2. [minor] Add regression tests for an empty file and a comment-only file ("# TODO").
3. [nit] Add a CHANGELOG entry under "Fixed".`

const planARevised = `Plan A, revision 1

1. Reproduce with test/config.test.ts (the empty-file case).
2. In parseConfig, ` + "`const doc = load(raw) ?? {}`" + `.
3. If doc is not a plain object, throw ConfigError("<path>: expected a mapping, got <type>").
4. Tests: empty file → defaults; comment-only file → defaults; "true" → ConfigError.
5. CHANGELOG: "Fixed: parseConfig no longer throws a TypeError on an empty config file."
6. Verify: ` + "`npm test -- test/config.test.ts`" + ` and ` + "`npm run typecheck`" + `.`

const reviewApproved = `Review of plan A, revision 1: approved ✅

All three findings are addressed: the mapping check, the regression tests and the changelog entry. 좋습니다 — ready to execute.`

const configPatch = `--- a/src/config.ts
+++ b/src/config.ts
@@ -12,6 +12,9 @@ export function parseConfig(path: string): Config {
   const raw = readFileSync(path, "utf8");
-  const doc = load(raw) as RawConfig;
+  const doc = (load(raw) ?? {}) as RawConfig;
+  if (typeof doc !== "object" || Array.isArray(doc)) {
+    throw new ConfigError(` + "`${path}: expected a mapping, got ${typeof doc}`" + `);
+  }
   return { settings: { ...DEFAULTS, ...doc.settings } };
 }
--- a/test/config.test.ts
+++ b/test/config.test.ts
@@ -24,3 +24,13 @@ describe("parseConfig", () => {
+  it("returns defaults when the config file only has comments", () => {
+    expect(parseConfig(fixture("comments.yml"))).toEqual({ settings: DEFAULTS });
+  });
+
+  it("rejects a document that is not a mapping", () => {
+    expect(() => parseConfig(fixture("scalar.yml"))).toThrow(ConfigError);
+  });
 });
--- a/CHANGELOG.md
+++ b/CHANGELOG.md
@@ -3,0 +4,2 @@
+### Fixed
+- parseConfig no longer throws a TypeError on an empty config file.
`

const executorReport = `Done. parseConfig now treats an empty or comment-only config file as {} and rejects a document that is not a mapping with ConfigError.

Changed:
- src/config.ts: ` + "`load(raw) ?? {}`" + ` and a mapping check
- test/config.test.ts: two regression cases (comment-only file, scalar document)
- CHANGELOG.md: a "Fixed" entry

Tests: 5 passed, 0 failed (test/config.test.ts).`

const verification = `Verification report ✅

- test/config.test.ts: 5/5 passed, including "returns defaults when the config file is empty".
- The diff matches the approved plan (revision 1); no call sites changed.
- Reproduction: ` + "`touch .shipcode.yml && shipcode run`" + ` now starts with the defaults.

요약: 빈 설정 파일에서도 parseConfig가 기본값을 반환하고, 매핑이 아닌 문서는 ConfigError로 보고합니다. 🎉`
