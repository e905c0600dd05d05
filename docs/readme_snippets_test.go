package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every Go snippet in the README is a whole program that compiles as
// pasted, against this module.
func TestReadmeGoSnippetsCompile(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	snippets := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllSubmatch(readme, -1)
	if len(snippets) == 0 {
		t.Fatal("no Go snippet in README.md: the reading is broken")
	}
	for i, m := range snippets {
		src := string(m[1])
		if !strings.HasPrefix(src, "package ") {
			t.Errorf("README Go snippet %d does not start with a package clause: paste-ready snippets are whole programs\n%s", i+1, src)
			continue
		}
		// Inside the module, so that its imports resolve to this code.
		dir, err := os.MkdirTemp("..", ".readme-snippet-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if err := os.WriteFile(filepath.Join(dir, "main.go"), m[1], 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("go", "vet", ".")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("README Go snippet %d does not compile: %v\n%s\n%s", i+1, err, out, src)
		}
	}
}
