package schema

import (
	"strings"
	"testing"
)

const overlaySandbox = `# a comment
image: x
mounts:
  - bind: ./workspace
    target: /workspace
network:
  strict: false
  allow:
    - "opencode.ai"
`

const overlaySecrets = `K:
  value: "${K}"
  allow: [opencode.ai]
  substitution:
    headers: true
    query: false
O:
  value: "${O}"
  allow: [x.example.com]
  substitution:
    headers: false
    body: true
`

func TestMSBOverlay(t *testing.T) {
	sb, sec, err := MSBOverlay([]byte(overlaySandbox), []byte(overlaySecrets), OverlayOptions{
		DenyMessage: "ask for `asb network allow {host}`", HeaderFields: map[string][]string{"K": {"Authorization"}, "O": {"x-api-key"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"network:\n  strict: false\n  allow:\n    - \"opencode.ai\"\n  http:\n    deny_response: true\n    deny_message: \"ask for `asb network allow {host}`\"\n"} {
		if !strings.Contains(string(sb), want) {
			t.Errorf("sandbox overlay lacks %q:\n%s", want, sb)
		}
	}
	if strings.Contains(string(sb), "mounts") || strings.Contains(string(sb), "image") {
		t.Errorf("the sandbox overlay repeats more than network (a path would move):\n%s", sb)
	}
	if !strings.Contains(string(sec), "    query: false\n    header_fields: [authorization]\n") || strings.Count(string(sec), "header_fields") != 1 {
		t.Errorf("secrets overlay: K narrowed to authorization, O (no header substitution) left alone:\n%s", sec)
	}
	// Nothing to say: no file.
	sb, sec, err = MSBOverlay([]byte("image: x\nnetwork: public\n"), []byte(overlaySecrets), OverlayOptions{DenyMessage: "m"})
	if err != nil || sb != nil || sec != nil {
		t.Errorf("network public, no header fields: %q %q %v", sb, sec, err)
	}
}

func TestLackedKeysAndStrip(t *testing.T) {
	doc := []byte("network:\n  allow: [a.example.com]\n  http:\n    deny_response: true\n")
	before := func(since string) bool { return since <= "0.7.4" }
	if got := LackedKeys(SandboxFile, doc, before); len(got) != 1 || got[0].Path != "network.http" {
		t.Errorf("LackedKeys = %+v", got)
	}
	if got := LackedKeys(SandboxFile, doc, func(string) bool { return true }); len(got) != 0 {
		t.Errorf("a release with every key lacks %+v", got)
	}
	sec := []byte("K:\n  value: \"${K}\"\n  substitution:\n    headers: true\n    header_fields: [authorization]\n")
	if got := LackedKeys(SecretsFile, sec, before); len(got) != 1 {
		t.Errorf("header_fields before 0.7.8: %+v", got)
	}
	out, err := StripVersioned(SecretsFile, sec)
	if err != nil || strings.Contains(string(out), "header_fields") || !strings.Contains(string(out), "headers: true") {
		t.Errorf("StripVersioned = %q, %v", out, err)
	}
}

// TestVersionedKeyMessage: a key of the table of releases names the release
// that reads it, the one installed (when known) and the way on; any other
// unknown key keeps msb's own words.
func TestVersionedKeyMessage(t *testing.T) {
	doc := []byte("K:\n  value: \"${K}\"\n  allow: [a.example.com]\n  substitution:\n    headers: true\n    header_fields: [authorization]\n    bogus: 1\n")
	for msb, want := range map[string]string{
		"":      "K.substitution.header_fields is read by msb 0.7.8 and later; an older msb rejects it",
		"0.7.2": "K.substitution.header_fields is read by msb 0.7.8 and later; the msb installed here is 0.7.2, which rejects it",
		"0.7.8": "not supported by asb in a committed file: K.substitution.header_fields is read by msb 0.7.8 and later (installed here: 0.7.8), but a teammate's msb 0.7.2–0.7.7 rejects it",
	} {
		l := newLoader(SecretsFile)
		l.msb = msb
		l.secrets(doc)
		var got []string
		for _, p := range l.probs {
			got = append(got, p.Msg)
		}
		if len(got) != 2 || !strings.HasPrefix(got[0], want) || !strings.HasPrefix(got[1], "unknown key bogus") {
			t.Errorf("msb %q: %q, want %q then unknown key bogus", msb, got, want)
		}
	}
}
