// Package docs holds the project's documents; its test checks that
// docs/architecture.md names only what the code has.
package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// declared returns, by package name, the names a package of the module
// declares at top level, and its methods as Type.Method.
func declared(t *testing.T, root string) map[string]map[string]bool {
	t.Helper()
	names := map[string]map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		set := names[f.Name.Name]
		if set == nil {
			set = map[string]bool{}
			names[f.Name.Name] = set
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					set[d.Name.Name] = true
					continue
				}
				typ := d.Recv.List[0].Type
				if star, ok := typ.(*ast.StarExpr); ok {
					typ = star.X
				}
				if idx, ok := typ.(*ast.IndexExpr); ok {
					typ = idx.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					set[id.Name+"."+d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						set[s.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range s.Names {
							set[n.Name] = true
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestArchitectureNamesExist: every package.Identifier (or
// package.Type.Method) that docs/architecture.md and docs/design/*.md name
// in code spans, of a package of this module, is declared there.
func TestArchitectureNamesExist(t *testing.T) {
	docs, err := filepath.Glob("design/*.md")
	if err != nil {
		t.Fatal(err)
	}
	names := declared(t, "..")
	for _, path := range append([]string{"architecture.md"}, docs...) {
		doc, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		checked := checkNames(t, "docs/"+path, doc, names)
		if path == "architecture.md" && checked < 10 {
			t.Fatalf("only %d names checked: the reading of the document is broken", checked)
		}
	}
}

// checkNames reports every name of this module's packages in doc's code
// spans that is not declared, and returns how many it checked.
func checkNames(t *testing.T, path string, doc []byte, names map[string]map[string]bool) int {
	doc = regexp.MustCompile("(?s)```.*?```").ReplaceAll(doc, nil) // diagrams, not code spans
	spans := regexp.MustCompile("`[^`\n]+`").FindAll(doc, -1)
	ref := regexp.MustCompile(`\b([a-z][a-z0-9]*)\.([A-Z]\w*)(?:\.([A-Z]\w*))?`)
	checked := 0
	for _, span := range spans {
		for _, m := range ref.FindAllStringSubmatch(string(span), -1) {
			set, ours := names[m[1]]
			if !ours {
				continue // another module's package (http.RoundTripper)
			}
			checked++
			name := m[2]
			if m[3] != "" {
				name += "." + m[3]
			}
			if !set[name] {
				t.Errorf("%s names %s.%s, which package %s does not declare", path, m[1], name, m[1])
			}
		}
	}
	return checked
}
