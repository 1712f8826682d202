package runner

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// TestWarmRecordRoundTrip: a record is read back as it was written, each
// field of its key, stamps and steps; a record of another version, or
// one with a line cut, is none.
func TestWarmRecordRoundTrip(t *testing.T) {
	step := WarmStep{Task: "agent", Kind: "cmd", Cmd: "msb exec 'x y' -- \"$A\"\n", Log: "task: [agent] …", Dir: "/o d",
		Env: []string{"A=1", "B= 2"}, Dotenv: []string{"secrets.env"}, Set: []string{"pipefail"}, Shopt: []string{"globstar"},
		IgnoreError: true, VM: "vm-1", IsDir: "./workspace", Argv: []string{"msb", "exec", "x y"}}
	r := &WarmRecord{Version: WarmVersion,
		Key: WarmKey{Dir: "/o d", Cwd: "/o d/sub", Tasks: []string{"vm:start", "agent"},
			Vars: map[string]string{"VM": "vm-1", "ASB": "/bin/asb"}, Silent: true, Args: true},
		Taskfile: "abc", Binaries: []FileStamp{{Path: "/bin/asb", Size: 9, ModNs: -3}},
		Sources: []TreeStamp{{Root: "/o d/toolchain", Sum: "s1"}},
		Checks:  []WarmStep{{Task: "vm:create", Kind: "status", Cmd: "msb inspect vm-1", Dir: "/o d", VM: "vm-1"}},
		Cmds:    []WarmStep{step}, Session: true}
	raw := encodeWarm(r)
	got, ok := DecodeWarm(raw)
	if !ok || !reflect.DeepEqual(got, r) {
		t.Fatalf("read back %v:\n%+v\nwant\n%+v\n%s", ok, got, r, raw)
	}
	if !bytes.Equal(keyBytes(got.Key), keyBytes(r.Key)) || warmRel(got.Key) != warmRel(r.Key) {
		t.Error("the key read back names another record")
	}
	other := r.Key
	other.Cwd = "/elsewhere"
	if warmRel(other) == warmRel(r.Key) || bytes.Equal(keyBytes(other), keyBytes(r.Key)) {
		t.Error("another working folder names the same record")
	}
	older := strings.Replace(string(raw), warmFormat(), "asb-warm 3", 1)
	if _, ok := DecodeWarm([]byte(older)); ok {
		t.Error("a record of another version was read")
	}
	cut := string(raw[:strings.Index(string(raw), "\ncmd ")+8]) + "\n"
	if _, ok := DecodeWarm([]byte(cut)); ok {
		t.Errorf("a cut step was read:\n%s", cut)
	}
}
