package store

import (
	"fmt"
	"testing"
)

// Holes are filled in the order they appear, each with its arguments,
// however the parts nest; braces of the SQL itself stay.
func TestSQLF(t *testing.T) {
	cond := sqlf("project = {project} AND thread_id IN {ids}", holes{"project": arg("p"), "ids": arg([]string{"a"})})
	q := sqlf("SELECT map('k', 1), '{\"x\": 2}' FROM {source} WHERE {cond} AND n > {n} OR {cond}",
		holes{"source": raw("conversations"), "cond": cond, "n": arg(3)})
	want := "SELECT map('k', 1), '{\"x\": 2}' FROM conversations WHERE project = ? AND thread_id IN ? AND n > ? OR project = ? AND thread_id IN ?"
	if q.text != want || fmt.Sprint(q.args) != "[p [a] 3 p [a]]" {
		t.Errorf("sqlf = %q %v\nwant %q [p [a] 3 p [a]]", q.text, q.args, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("a hole without a part did not panic")
		}
	}()
	sqlf("SELECT {missing}", holes{})
}
