package root

import (
	"testing"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/host"
)

func TestFactoryLooksAtTheRealHost(t *testing.T) {
	f := NewFactory(&cmdutil.IOStreams{})
	if _, ok := f.Host.(host.SystemHost); !ok {
		t.Errorf("asb must look at the real host, got %T", f.Host)
	}
	if f.Engine == nil {
		t.Error("no engine")
	}
}
