package testenv

import (
	"encoding/base64"
	"testing"
)

// The serial console interleaves the scenario's result lines with other
// output (the BIOS's, the kernel's, a line's own \r): each is read whole.
func TestParseSession(t *testing.T) {
	b := func(s string) string { return "x" + base64.StdEncoding.EncodeToString([]byte(s)) }
	log := "SeaBIOS\r\nBooting from ROM..@@asb note svm 2\r\n" +
		"@@asb step doctor 0 0.61 x x\n" +
		"noise\n@@asb step whoami 1 6.5 " + b("dev 1000 /workspace\n") + " " + b("oops\n") + "\r\n" +
		"@@asb note vm a-b c\n@@asb end\n"
	s := parseSession(ShapeNested, log)
	if !s.Ended || s.Notes["svm"] != "2" || s.Notes["vm"] != "a-b c" {
		t.Fatalf("notes %v, ended %v", s.Notes, s.Ended)
	}
	if st := s.Steps["doctor"]; st.Code != 0 || st.Out != "" || st.Err != "" || st.Secs != 0.61 {
		t.Fatalf("doctor: %+v", st)
	}
	if st := s.Steps["whoami"]; st.Code != 1 || st.Out != "dev 1000 /workspace\n" || st.Err != "oops\n" {
		t.Fatalf("whoami: %+v", st)
	}
	if len(s.Order) != 2 || s.Order[1] != "whoami" {
		t.Fatalf("order %v", s.Order)
	}
	if parseSession(ShapeNested, "@@asb step cut 0 1.0 x\n").Steps["cut"] != (Step{}) {
		t.Fatal("a line cut short was read as a step")
	}
}
