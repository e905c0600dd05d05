package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// sqlStatement matches a string that begins a ClickHouse statement.
var sqlStatement = regexp.MustCompile(`^\s*(SELECT|INSERT INTO|ALTER TABLE|CREATE|DROP|TRUNCATE|OPTIMIZE|RENAME|SYSTEM|WITH)\s`)

// sqlAllowed are the packages besides store that may hold SQL text, and
// why: none is a product package.
var sqlAllowed = map[string]string{
	"internal/testkit":   "tests' rows inserted as a user's own SQL would, bypassing the writer on purpose",
	"internal/chcluster": "the test cluster's launcher probes ZooKeeper before the store can connect",
}

// Only package store (its subpackages included: DDL, migrations,
// transfer, archive) holds SQL text: every query is reviewed in one place.
func TestOnlyStoreHoldsSQL(t *testing.T) {
	root := filepath.Join("..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			skip := rel == "store" || sqlAllowed[filepath.ToSlash(rel)] != "" ||
				d.Name() == "node_modules" || d.Name() == "testdata" || (strings.HasPrefix(d.Name(), ".") && rel != ".")
			if skip {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if s, err := strconv.Unquote(lit.Value); err == nil && sqlStatement.MatchString(s) {
				t.Errorf("%s holds SQL (%.40q): queries belong to package store", rel, s)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The viewer and the MCP server reach ClickHouse only through store: no
// package of theirs imports the driver, and none depends on the collector.
func TestViewerReachesClickHouseThroughStore(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "../viewer/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const module = "github.com/convtrace/convtrace/"
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := fields[0]
		if strings.HasPrefix(pkg, module+"collector") {
			t.Errorf("the viewer depends on %s", pkg)
		}
		if !strings.HasPrefix(pkg, module) || strings.HasPrefix(pkg, module+"store") {
			continue
		}
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, "github.com/ClickHouse/") {
				t.Errorf("%s imports %s: only store talks to ClickHouse", pkg, imp)
			}
		}
	}
}
