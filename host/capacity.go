package host

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"strings"
)

// Machine is what this machine has for VMs: its CPUs and memory.
type Machine struct {
	CPUs         int
	MemTotalMiB  int64
	MemAvailMiB  int64 // MemAvailable: what can be given without swapping
	MemInfoKnown bool  // false where /proc/meminfo cannot be read (not Linux)
}

// Held is a running sandbox and what its config asks for.
type Held struct {
	Name      string
	CPUs      int
	MemoryMiB int64
}

// ReadMachine gathers this machine's CPUs and memory (/proc/meminfo).
func ReadMachine(h Host) Machine {
	m := Machine{CPUs: runtime.NumCPU()}
	raw, err := h.ReadFile("/proc/meminfo")
	if err != nil {
		return m
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		kb, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "MemTotal:":
			m.MemTotalMiB = kb / 1024
		case "MemAvailable:":
			m.MemAvailMiB, m.MemInfoKnown = kb/1024, true
		}
	}
	return m
}

// HostReserveMiB is the memory asb leaves to the host itself (its desktop,
// the builder, msb) when it adds up what the VMs may take.
const HostReserveMiB = 1024

// CanHold is the one rule on whether this machine can take another VM that
// asks for cpus and memMiB while the sandboxes in held run: the memory it
// asks for must be available now, and all the VMs' memory together must
// fit in the machine's less the host's reserve (a VM takes its memory as
// it touches it, so what they hold now understates what they will). CPUs
// are not refused: more vCPUs than the machine has, or VMs sharing them,
// only slow them, which the returned note says. name is the VM.
func CanHold(m Machine, held []Held, name string, cpus int, memMiB int64) (note string, err error) {
	var heldMem int64
	heldCPUs := 0
	var names []string
	for _, h := range held {
		heldMem += h.MemoryMiB
		heldCPUs += h.CPUs
		names = append(names, fmt.Sprintf("%s (%d MiB)", h.Name, h.MemoryMiB))
	}
	if m.MemInfoKnown {
		if memMiB > m.MemAvailMiB {
			return "", fmt.Errorf("%s asks for %d MiB of memory and this machine has %d MiB free: stop a sandbox (asb task vm:stop, asb session rm) or lower memory in sandbox.yaml", name, memMiB, m.MemAvailMiB)
		}
		if room := m.MemTotalMiB - HostReserveMiB - heldMem; memMiB > room {
			return "", fmt.Errorf("%s asks for %d MiB of memory; the running sandboxes hold %d MiB (%s) of this machine's %d MiB, leaving %d MiB beside the host's %d: stop one (asb session rm, asb task vm:stop) or lower memory in sandbox.yaml",
				name, memMiB, heldMem, strings.Join(names, ", "), m.MemTotalMiB, max(room, 0), HostReserveMiB)
		}
	}
	switch {
	case cpus > m.CPUs:
		note = fmt.Sprintf("%s asks for %d CPUs and this machine has %d: it runs, slower (lower cpus in sandbox.yaml)", name, cpus, m.CPUs)
	case heldCPUs+cpus > m.CPUs:
		note = fmt.Sprintf("%d VMs will share this machine's %d CPUs (%d asked for in all): each runs slower", len(held)+1, m.CPUs, heldCPUs+cpus)
	}
	return note, nil
}

// FreePort returns a host port free to bind on bind (127.0.0.1 when empty)
// for proto that is not in taken: the kernel picks one, and one in taken
// (recorded for a VM that is stopped) is passed over.
func FreePort(bind, proto string, taken map[int]bool) (int, error) {
	if bind == "" {
		bind = "127.0.0.1"
	}
	for range 64 {
		p, err := kernelPort(bind, proto)
		if err != nil {
			return 0, err
		}
		if !taken[p] {
			return p, nil
		}
	}
	return 0, errors.New("the kernel kept offering ports already given to other sessions")
}

func kernelPort(bind, proto string) (int, error) {
	addr := net.JoinHostPort(bind, "0")
	if proto == "udp" {
		c, err := net.ListenPacket("udp", addr)
		if err != nil {
			return 0, err
		}
		defer c.Close()
		return c.LocalAddr().(*net.UDPAddr).Port, nil
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
