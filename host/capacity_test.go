package host

import (
	"strings"
	"testing"
)

func TestCanHold(t *testing.T) {
	m := Machine{CPUs: 4, MemTotalMiB: 16384, MemAvailMiB: 12000, MemInfoKnown: true}
	two := []Held{{Name: "a", CPUs: 2, MemoryMiB: 4096}, {Name: "b", CPUs: 2, MemoryMiB: 4096}}
	cases := []struct {
		name    string
		held    []Held
		cpus    int
		mem     int64
		wantErr string
		note    string
	}{
		{"fits", nil, 2, 4096, "", ""},
		{"more cpus than the machine: slower", nil, 8, 1024, "", "asks for 8 CPUs and this machine has 4"},
		{"more than free", nil, 2, 13000, "has 12000 MiB free", ""},
		{"held leaves too little", two, 2, 8000, "the running sandboxes hold 8192 MiB (a (4096 MiB), b (4096 MiB))", ""},
		{"fits beside, cpus shared", two, 2, 4096, "", "3 VMs will share this machine's 4 CPUs"},
	}
	for _, c := range cases {
		note, err := CanHold(m, c.held, "vm", c.cpus, c.mem)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s: err %v, want %q", c.name, err, c.wantErr)
		case !strings.Contains(note, c.note) || (c.note == "" && note != ""):
			t.Errorf("%s: note %q, want %q", c.name, note, c.note)
		}
	}
}

func TestReadMachine(t *testing.T) {
	h := fakeMeminfo("MemTotal:       24576000 kB\nMemFree:  100 kB\nMemAvailable:   20480000 kB\n")
	m := ReadMachine(h)
	if !m.MemInfoKnown || m.MemTotalMiB != 24000 || m.MemAvailMiB != 20000 || m.CPUs < 1 {
		t.Errorf("ReadMachine = %+v", m)
	}
}

func TestFreePortSkipsTaken(t *testing.T) {
	taken := map[int]bool{}
	for range 5 {
		p, err := FreePort("", "tcp", taken)
		if err != nil {
			t.Fatal(err)
		}
		if taken[p] {
			t.Fatalf("FreePort gave %d twice", p)
		}
		taken[p] = true
	}
}

type meminfoHost struct {
	SystemHost
	data string
}

func (h meminfoHost) ReadFile(string) ([]byte, error) { return []byte(h.data), nil }

func fakeMeminfo(s string) Host { return meminfoHost{data: s} }
