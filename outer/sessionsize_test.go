package outer

import (
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/runner"
)

// A base fits when it takes at most half the free bytes and half the free
// files; past either, the message says which and names the largest file.
func TestJudgeCheckout(t *testing.T) {
	s := Session{Name: "one", Base: "main", BaseCommit: "0123456789abcdef0123"}
	for _, c := range []struct {
		size         runner.TreeSize
		bytes, files uint64
		want         string
	}{
		{runner.TreeSize{Bytes: 50, Files: 5}, 100, 10, ""},
		{runner.TreeSize{Bytes: 51, Files: 1, Largest: "z", MaxSize: 51}, 100, 10, "more than half of the 100 B free"},
		{runner.TreeSize{Bytes: 0, Files: 6, Largest: "e"}, 100, 10, "more files than half of the 10 the file system can still make"},
		{runner.TreeSize{Bytes: 1 << 40, Files: 3}, 1 << 62, 1 << 62, ""},
	} {
		err := judgeCheckout("/d", s, c.size, c.bytes, c.files)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v in %d bytes, %d files: %v", c.size, c.bytes, c.files, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "(the largest, "+c.size.Largest+", ")):
			t.Errorf("%+v in %d bytes, %d files: %v, want %q and the largest named", c.size, c.bytes, c.files, err, c.want)
		}
	}
}
