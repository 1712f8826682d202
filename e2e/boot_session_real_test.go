package e2e

import (
	"strings"
	"testing"
)

// TestRealBootSession: a session (docs/sessions.md) against the real msb,
// in the boot session's guest (e2e/testdata/boot/steps_session.sh). Its VM
// boots with the session's checkout as /workspace, which holds the base's
// last commit (the VM's own, fetched into the host repository); the
// agent's commit there comes back for session diff. Then the agent leaves
// work not committed and a FIFO named .gitignore (which msb 0.7.2's
// virtio-fs stores on the host as a regular empty file): session rm stops
// the VM first and refuses, naming why, at once; --force removes VM,
// checkout and branch, and nothing the VM planted ran on the host.
// (Before, every session's VM failed to start: its config reached the
// folder's files through ../../../, which msb 0.7.2 refuses.)
func TestRealBootSession(t *testing.T) {
	s := bootRun(t)
	ok(t, s, "sess_new")
	if out := ok(t, s, "sess_agent"); !strings.Contains(out, "base: from the vm") {
		t.Errorf("the session's agent did not find the base's last commit in its /workspace:\n%s", out)
	}
	if diff := ok(t, s, "sess_diff"); !strings.Contains(diff, "s.txt") {
		t.Errorf("session diff --stat does not show the agent's commit (s.txt):\n%s", diff)
	}
	if out := ok(t, s, "sess_plant"); !strings.Contains(out, "in the VM: fifo") {
		t.Errorf("the agent could not plant its FIFO:\n%s", out)
	}
	kind := strings.TrimSpace(ok(t, s, "sess_host"))
	t.Logf("the VM's FIFO .gitignore, on the host: %s", kind)
	why := "its checkout has changes that are not committed"
	if kind == "fifo" {
		why = ".gitignore is a FIFO (named pipe)"
	}
	rm := s.Step(t, "sess_rm")
	for _, want := range []string{why, "is stopped now"} {
		if rm.Code == 0 || !strings.Contains(rm.Err, want) {
			t.Errorf("session rm of a checkout with work not committed and the VM's FIFO: exit %d, want a refusal saying %q:\n%s%s", rm.Code, want, rm.Out, rm.Err)
		}
	}
	if rm.Secs > 100 {
		t.Errorf("session rm took %.0f s: it waited on the FIFO until its bound", rm.Secs)
	}
	if st := ok(t, s, "sess_stopped"); !strings.Contains(st, `"Stopped"`) {
		t.Errorf("after session rm's refusal msb says of the session's VM:\n%s", st)
	}
	if out := ok(t, s, "sess_rm_force"); !strings.Contains(out, "session s1 removed") {
		t.Errorf("session rm --force: %s", out)
	}
	gone := ok(t, s, "sess_gone")
	for _, line := range strings.Split(strings.TrimSpace(gone), "\n") {
		k, v, _ := strings.Cut(line, ":")
		if (k == "vms" && strings.Contains(v, "-s1")) || (k == "sessions" && strings.TrimSpace(v) != "") || (k == "canary" && strings.TrimSpace(v) != "") {
			t.Errorf("after session rm --force, %s:%s", k, v)
		}
	}
}

// TestRealBootDotDotBind: msb starts no VM with a .. in a bind's path,
// which validate refuses (schema.BindDotDot); were msb to start it, the
// rule would be stricter than msb and should say so.
func TestRealBootDotDotBind(t *testing.T) {
	s := bootRun(t)
	st := s.Step(t, "dotdot_msb")
	if st.Code == 0 || !strings.Contains(st.Out+st.Err, "Invalid argument") {
		t.Fatalf("msb create with a bind through ..: exit %d, want a failure to start with EINVAL:\n%s%s", st.Code, st.Out, st.Err)
	}
}

// TestRealBootStopBudget: msb's graceful stop over its budget fails with
// words of its own and kills nothing (asb's stops have a budget,
// runner.StopBudget, for a VM msb leaves draining: session rm's stop
// waited on one until the test killed it). Those words, from the real
// msb (a budget of 0 s: msb sends nothing), are the kind lib.sh's flaky
// names msb's and tries once more.
func TestRealBootStopBudget(t *testing.T) {
	s := bootRun(t)
	st := s.Step(t, "stop_budget")
	msg := strings.TrimSpace(st.Out + st.Err)
	if st.Code == 0 || !strings.Contains(msg, "timed out") {
		t.Fatalf("msb stop --timeout 0 of a running VM: exit %d, want a failure saying it timed out:\n%s", st.Code, msg)
	}
	if out := ok(t, s, "stop_budget_left"); !strings.Contains(out, `"Running"`) {
		t.Errorf("after a stop over its budget msb says of the VM (want it running: no kill was asked):\n%s", out)
	}
	out, retried := flakyOn(t, msg)
	if !strings.Contains(retried, "thestep:graceful_stop_of_sandbox") {
		t.Errorf("msb's words for a stop over its budget, %q: want lib.sh's flaky to name them and try once more\n%s\nretried: %q", msg, out, retried)
	}
	t.Logf("msb's words for a stop over its budget: %s", msg)
}
