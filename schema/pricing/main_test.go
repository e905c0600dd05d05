package pricing_test

import (
	"testing"

	"github.com/convtrace/convtrace/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }
