package docs

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The image runs as a user of its own with a data folder it owns and
// convtrace uses (the spool, the archive journal), and its build context
// leaves out every local data folder git ignores (.bench-data is 1.5 GB
// after make bench). Docker is not needed to check either.
func TestDockerImageLayout(t *testing.T) {
	df, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	final := string(df)[strings.LastIndex(string(df), "\nFROM "):]
	user := regexp.MustCompile(`(?m)^USER (\S+)$`).FindStringSubmatch(final)
	data := regexp.MustCompile(`(?m)^ENV CONVTRACE_DATA=(\S+)$`).FindStringSubmatch(final)
	switch {
	case user == nil || user[1] == "root" || user[1] == "nobody":
		t.Errorf("the image runs as %v: want a user of its own", user)
	case data == nil:
		t.Errorf("the image sets no CONVTRACE_DATA: serve's spool would go to a folder nobody can write")
	case !regexp.MustCompile(`useradd .*--home-dir ` + regexp.QuoteMeta(data[1]) + ` --create-home ` + user[1]).MatchString(final):
		t.Errorf("%s is not created as the home of %s, who must write it", data[1], user[1])
	}

	ignored := map[string]bool{}
	di, err := os.Open("../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	defer di.Close()
	for sc := bufio.NewScanner(di); sc.Scan(); {
		ignored[strings.TrimSpace(sc.Text())] = true
	}
	gi, err := os.Open("../.gitignore")
	if err != nil {
		t.Fatal(err)
	}
	defer gi.Close()
	for sc := bufio.NewScanner(gi); sc.Scan(); {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "/.") {
			continue // a local data folder: dot-named at the root
		}
		name := strings.Trim(line, "/")
		if !ignored[name] && !ignored[filepath.Join("**", name)] {
			t.Errorf(".dockerignore does not leave out %s, which .gitignore ignores", name)
		}
	}
}
