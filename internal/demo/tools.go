package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// executorTools are the tools the executor is offered.
var executorTools = []Tool{
	{Type: "function", Function: Function{
		Name:        "read_file",
		Description: "Read a file of the repository.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
	}},
	{Type: "function", Function: Function{
		Name:        "run_tests",
		Description: "Run the test suite, or one test file.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`),
	}},
	{Type: "function", Function: Function{
		Name:        "apply_patch",
		Description: "Apply a unified diff to the repository.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"patch":{"type":"string"}},"required":["patch"]}`),
	}},
}

// workspace is the repository the executor works on: a canned TypeScript
// project whose parseConfig crashes on an empty config file until a patch
// to src/config.ts is applied. One run's executor uses it, one tool at a
// time.
type workspace struct {
	patched bool
}

// run executes one tool call.
func (w *workspace) run(_ context.Context, name, arguments string) (string, error) {
	var args struct{ Path, Patch string }
	if err := json.Unmarshal([]byte(arguments), &args); err != nil {
		return "", fmt.Errorf("%s: arguments: %w", name, err)
	}
	switch name {
	case "read_file":
		switch args.Path {
		case "src/config.ts":
			if w.patched {
				return configSourcePatched, nil
			}
			return configSource, nil
		}
		return "", fmt.Errorf("read_file: %s: no such file", args.Path)
	case "run_tests":
		if w.patched {
			return testsPassing, nil
		}
		return testsFailing, nil
	case "apply_patch":
		if !strings.Contains(args.Patch, "+++ b/src/config.ts") {
			return "", fmt.Errorf("apply_patch: the patch changes no file this repository has")
		}
		w.patched = true
		return "Applied patch: src/config.ts (+4 −1), test/config.test.ts (+7), CHANGELOG.md (+2).", nil
	}
	return "", fmt.Errorf("unknown tool %q", name)
}

const configSource = `import { readFileSync } from "node:fs";
import { load } from "js-yaml";
import { ConfigError } from "./errors";

export interface Settings { model: string; maxTurns: number; }
export interface Config { settings: Settings; }
type RawConfig = { settings?: Partial<Settings> };

const DEFAULTS: Settings = { model: "claude-sonnet-4-5", maxTurns: 20 };

export function parseConfig(path: string): Config {
  const raw = readFileSync(path, "utf8");
  const doc = load(raw) as RawConfig;
  return { settings: { ...DEFAULTS, ...doc.settings } };
}
`

var configSourcePatched = strings.Replace(configSource,
	"  const doc = load(raw) as RawConfig;\n",
	"  const doc = (load(raw) ?? {}) as RawConfig;\n"+
		"  if (typeof doc !== \"object\" || Array.isArray(doc)) {\n"+
		"    throw new ConfigError(`${path}: expected a mapping, got ${typeof doc}`);\n"+
		"  }\n", 1)

const testsFailing = `$ npx vitest run test/config.test.ts

 FAIL  test/config.test.ts > parseConfig > returns defaults when the config file is empty
TypeError: Cannot read properties of undefined (reading 'settings')
 ❯ parseConfig src/config.ts:14:38
 ❯ test/config.test.ts:19:12

 Test Files  1 failed (1)
      Tests  1 failed | 2 passed (3)`

const testsPassing = `$ npx vitest run test/config.test.ts

 ✓ test/config.test.ts (5 tests) 12ms

 Test Files  1 passed (1)
      Tests  5 passed (5)`
